"""``rapport run BENCHMARK --help``: the benchmark's own options, read from its options model."""

from __future__ import annotations

import argparse
import inspect
import re
import shutil
import textwrap
import types
from collections.abc import Sequence
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from rapport.envs import BENCHMARKS, UnknownBenchmarkError, benchmark_class

_LITERAL_MARKUP = re.compile(r"``([^`]*)``|`([^`]*)`")


def plain(text: str) -> str:
    """A docstring as one paragraph of plain text (reST literals unquoted)."""
    return " ".join(_LITERAL_MARKUP.sub(lambda m: m.group(1) or m.group(2), text).split())


def _value_hint(annotation: Any) -> str:
    """What the value looks like on the command line: ``N``, ``a|b``, ``A,B,...``."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return _value_hint(parts[0]) if len(parts) == 1 else "VALUE"
    if origin is Literal:
        return "|".join(str(a) for a in get_args(annotation))
    if origin in (list, tuple, Sequence, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        inner = _value_hint(args[0]) if args else "VALUE"
        return f"{inner.replace('|', ',')}[,...]" if "|" in inner else f"{inner},..."
    if annotation is bool:
        return "true|false"
    if annotation is int:
        return "N"
    if annotation is float:
        return "X"
    if annotation is str:
        return "TEXT"
    return "VALUE"


def _default(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "default: not set"
    if isinstance(value, bool):
        return f"default: {str(value).lower()}"
    if isinstance(value, (list, tuple)):
        return f"default: {','.join(str(v) for v in value)}"
    return f"default: {value}"


def options_help(model: type[BaseModel], width: int | None = None) -> str:
    """One entry per option: ``--name HINT``, then its docstring and default, wrapped."""
    width = width or min(shutil.get_terminal_size((100, 24)).columns, 100)
    lines: list[str] = []
    for name, field in model.model_fields.items():
        flag = f"  --{name.replace('_', '-')} {_value_hint(field.annotation)}"
        lines.append(flag)
        text = f"{plain(field.description or '')} ({_default(field)})".strip()
        lines.extend(textwrap.wrap(text, width, initial_indent=" " * 6, subsequent_indent=" " * 6))
    return "\n".join(lines)


def benchmark_help(name: str | None) -> str:
    """The options section for ``name``; without a name, or for one that cannot be
    loaded, the list of benchmarks and how to ask for one's options."""
    known = ", ".join(BENCHMARKS)
    if not name:
        return f"benchmarks: {known}\n'rapport run BENCHMARK --help' lists a benchmark's options."
    try:
        cls = benchmark_class(name)
    except (UnknownBenchmarkError, ImportError) as exc:
        return str(exc)
    about = f"{name}: {_about(cls)}\n\n"
    if cls.options_model is None:
        return f"{about}{name} does not list its options."
    head = f"options of {name} (--name VALUE, or under 'options:' in a --config file):"
    return f"{about}{head}\n{options_help(cls.options_model)}"


def _about(cls: type) -> str:
    """A benchmark class's docstring without its reST markup, lines as written."""
    text = inspect.getdoc(cls) or ""
    return _LITERAL_MARKUP.sub(lambda m: m.group(1) or m.group(2), text).strip()


class BenchmarkHelp(argparse.Action):
    """``-h/--help`` for ``run``: the usual help, then the named benchmark's options."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parser.print_help()
        print()
        print(benchmark_help(getattr(namespace, "benchmark", None)))
        parser.exit()
