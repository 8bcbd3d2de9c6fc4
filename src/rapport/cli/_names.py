"""Names a person may misspell (flags, config keys, benchmark options): one line saying which
name is unknown and the nearest known one."""

from __future__ import annotations

import argparse
import difflib
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from rapport.envs import UnknownBenchmarkError, benchmark_class

from ._errors import UsageError


def did_you_mean(name: str, known: Iterable[str], *, quote: str = "") -> str:
    """``"; did you mean --max-turns?"`` for the nearest of `known` (each quoted with
    `quote`), or ``""`` when none is near."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f"; did you mean {quote}{close[0]}{quote}?" if close else ""


def unknown_flag(flag: str, known: Iterable[str]) -> str:
    """``unknown option --max-turn; did you mean --max-turns?``"""
    return f"unknown option {flag}{did_you_mean(flag, known)}"


def options_model(benchmark: str | None) -> type[BaseModel] | None:
    """The options model of a registered benchmark when it refuses unknown names (None: the
    benchmark is unknown, cannot be imported or does not say; it then checks its options
    itself)."""
    if not benchmark:
        return None
    try:
        model = benchmark_class(benchmark).options_model
    except (UnknownBenchmarkError, ImportError):
        return None
    if model is None or model.model_config.get("extra") != "forbid":
        return None
    return model


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def check_flag_options(
    options: Mapping[str, str | None], model: type[BaseModel] | None, run_flags: Iterable[str]
) -> None:
    """Refuse a benchmark option given as a flag that the benchmark does not have, and a
    flag given without a value that is not a switch (``--problems`` alone is not "true").

    Raises:
        UsageError: one of them, with the nearest known flag.
    """
    if model is None:
        return
    known = [*run_flags, *(_flag(n) for n in model.model_fields)]
    for name, value in options.items():
        field = model.model_fields.get(name)
        if field is None:
            raise UsageError(unknown_flag(_flag(name), known))
        if value is None and not _is_switch(field.annotation):
            raise UsageError(f"{_flag(name)} needs a value")


def check_file_keys(
    path: str, data: Mapping[str, Any], model: type[BaseModel] | None, fields: Iterable[str]
) -> None:
    """Refuse a key of a config file that is neither a config field nor (at the top level or
    under ``options:``) an option of the benchmark.

    Raises:
        UsageError: naming the file, the key and the nearest known key.
    """
    if model is None:
        return
    names = [*fields, *model.model_fields]
    for key in data:
        name = str(key).replace("-", "_")
        if name not in names:
            hint = did_you_mean(name, names, quote="'")
            raise UsageError(f"config file {path}: unknown key '{key}'{hint}")
    for key in data.get("options") or {}:
        name = str(key).replace("-", "_")
        if name not in model.model_fields:
            hint = did_you_mean(name, model.model_fields, quote="'")
            raise UsageError(f"config file {path}: unknown option '{key}' under options{hint}")


def _is_switch(annotation: Any) -> bool:
    """A bool (or an optional bool) option: given alone, it reads as true."""
    if annotation is bool:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return bool in get_args(annotation)
    return False


class Renamed(argparse.Action):
    """A flag that was renamed: refused with one line naming the new form
    (``--sessions is now --format: --format parquet``)."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, *, new: str, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, **kwargs)
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        value = f" {values}" if isinstance(values, str) else ""
        parser.error(f"{option_string} is now {self.new}: {self.new}{value}")
