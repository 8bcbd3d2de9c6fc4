"""Experiment flags and YAML files -> one `ExperimentConfig` (flags override the file).

Flags the runner does not know (``--problems generated``, ``--judge-repeats 2``) become
benchmark options (``problems: "generated"``, ``judge_repeats: "2"``); the benchmark
validates them.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rapport._errors import error_line
from rapport.eval import ExperimentConfig

from ._errors import UsageError
from ._names import check_file_keys, check_flag_options, options_model

_FIELDS = set(ExperimentConfig.model_fields)
_COUNTS = ("users", "sessions", "max_turns", "seed", "concurrency")
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")
_DIGITS = re.compile(r"[0-9]{1,30}")
_DECIMAL = re.compile(r"(?:[0-9]{1,30}\.?[0-9]{0,30}|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,4})?")


def add_experiment_flags(parser: argparse.ArgumentParser) -> None:
    """The flags shared by ``run`` (and anything else that builds an experiment)."""
    parser.add_argument("--config", metavar="FILE.yaml", help="YAML file with config keys")
    parser.add_argument("--memory", metavar="A,B,C", help="memory methods, one condition each")
    parser.add_argument("--users", metavar="N", help="simulated users")
    parser.add_argument("--sessions", metavar="N", help="sessions per user")
    parser.add_argument("--max-turns", metavar="N", help="user-agent exchanges per session")
    parser.add_argument(
        "--model",
        metavar="ROLE=SPEC",
        action="append",
        default=[],
        help="model for a role (agent, user, judge, judge2, memory, all); repeatable",
    )
    parser.add_argument(
        "--preset",
        metavar="NAME",
        help="a named adaptation of the paper's protocol (rapport list presets; "
        "small: for small embedded models); default: the paper's",
    )
    parser.add_argument("--seed", metavar="N", help="run seed")
    parser.add_argument("--run-dir", metavar="DIR", help="where the run is stored")
    parser.add_argument("--concurrency", metavar="K", help="users run in parallel")
    parser.add_argument(
        "--no-cache", action="store_true", help="do not use the shared response cache"
    )
    accept_benchmark_options(parser)


def accept_benchmark_options(parser: argparse.ArgumentParser) -> None:
    """Make `parser` collect unknown ``--key value`` pairs in ``args.extra`` instead of failing."""
    parse = parser.parse_known_args

    def parse_known_args(
        args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        ns, extra = parse(args, namespace)
        ns.extra = [*getattr(ns, "extra", []), *extra]
        ns.run_flags = [flag for action in parser._actions for flag in action.option_strings]
        return ns, []

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign,assignment]


def parse_options(extra: Sequence[str]) -> dict[str, str]:
    """``["--judge-repeats", "2", "--env=a,b"]`` -> ``{"judge_repeats": "2", "env": "a,b"}``;
    a flag without a value reads as ``"true"`` (see `option_pairs`)."""
    return {k: "true" if v is None else v for k, v in option_pairs(extra).items()}


def option_pairs(extra: Sequence[str]) -> dict[str, str | None]:
    """``["--paraphrase", "--env=a,b"]`` -> ``{"paraphrase": None, "env": "a,b"}``.

    None marks a flag given without a value (a switch). An empty value (``--release ""``)
    is refused: a benchmark would read it as "not given" (or as the working directory) and
    run on something else than the command line says.
    """
    options: dict[str, str | None] = {}
    items = list(extra)
    i = 0
    while i < len(items):
        item = items[i]
        if not item.startswith("--") or len(item) == 2:
            raise UsageError(f"unexpected argument '{item}' (options are --name value)")
        name, eq, value = item[2:].partition("=")
        given: str | None = value
        if not eq:
            has_value = i + 1 < len(items) and not items[i + 1].startswith("--")
            given = items[i + 1] if has_value else None
            i += has_value
        if given is not None and not given.strip():
            raise UsageError(f"--{name} needs a value, got '{given}'")
        options[name.replace("-", "_")] = given
        i += 1
    return options


class _ConfigLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML forbids it;
    PyYAML would keep the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # ``<<: *base`` keys may be overridden: that is what merging is for
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # the base loader refuses it
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: str) -> dict[str, Any]:
    """A YAML config file as a mapping (one-line errors)."""
    if not path.strip():
        raise UsageError(f"--config needs a file name, got '{path}'")
    file = Path(path)
    try:
        data = yaml.load(file.read_text(encoding="utf-8"), Loader=_ConfigLoader)
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise UsageError(f"config file {path} is not UTF-8 text") from None
    except RecursionError:
        raise UsageError(f"config file {path} is nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"bad YAML in {path}{where}: {getattr(exc, 'problem', exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(
            f"config file {path} must hold a mapping of keys, not {type(data).__name__}"
        )
    _check_keys(path, data, "")
    _check_values(path, data)
    return data


def _check_values(path: str, data: dict[str, Any]) -> None:
    """Counts are numbers, not ``true``/``false`` (which pydantic would read as 1 and 0), and
    no benchmark option is an empty string (which a benchmark would read as "not given")."""
    fields = {k.replace("-", "_"): v for k, v in data.items()}
    for name in _COUNTS:
        if isinstance(fields.get(name), bool):
            raise UsageError(f"config file {path}: {name} must be a whole number, not a boolean")
    options = {k: v for k, v in fields.items() if k not in _FIELDS}
    options.update(fields.get("options") or {})
    for name, value in options.items():
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"config file {path}: {name} needs a value, got '{value}'")


def _check_keys(path: str, data: dict[Any, Any], where: str) -> None:
    """Keys must be names; ``options``, ``memory_options`` and ``models`` must be mappings."""
    for key, value in data.items():
        if not isinstance(key, str):
            raise UsageError(f"config file {path}: key {key!r}{where} must be a name")
        if where:
            continue
        name = key.replace("-", "_")
        if name in ("options", "memory_options", "models") and value is not None:
            if not isinstance(value, dict):
                raise UsageError(
                    f"config file {path}: {name} must be a mapping, not {type(value).__name__}"
                )
            _check_keys(path, value, f" in {name}")
            if name == "memory_options":
                for method, opts in value.items():
                    if not isinstance(opts, dict):
                        raise UsageError(
                            f"config file {path}: memory_options.{method} must be a mapping"
                        )
                    _check_keys(path, opts, f" in memory_options.{method}")


def _split_file(data: dict[str, Any]) -> dict[str, Any]:
    """File keys: config fields as they are; unknown top-level keys become options."""
    fields = {k.replace("-", "_"): v for k, v in data.items()}
    options = dict(fields.pop("options", None) or {})
    for key in [k for k in fields if k not in _FIELDS]:
        options[key] = fields.pop(key)
    if isinstance(fields.get("memory"), str):
        fields["memory"] = _names(fields["memory"])
    fields["options"] = options
    return fields


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _integer(flag: str, text: str) -> int:
    # ASCII digits only: int() would also take '1_000' and full-width digits.
    if not _WHOLE.fullmatch(text.strip()):
        raise UsageError(f"--{flag.replace('_', '-')} needs a whole number, got '{text}'")
    return int(text)


def whole_number(flag: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type=`` for `flag`: ASCII digits (no sign) from `low` to `high`.

    ``int()`` alone would take ``'1_0'``, full-width digits and ``'-1'``; argparse reports
    the refusal as one line (see `rapport.cli._Parser`).
    """

    def parse(text: str) -> int:
        if not _DIGITS.fullmatch(text.strip()) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(
                f"{flag} needs a whole number from {low} to {high}, got '{text}'"
            )
        return int(text)

    return parse


port_number = whole_number("--port", 0, 65535)
"""The ``type=`` of every ``--port`` (0: any free port)."""


def fraction(flag: str) -> Callable[[str], float]:
    """An argparse ``type=`` for `flag`: a plain decimal at least 0 and below 1.

    ``float()`` alone would take ``'nan'``, ``'inf'``, ``'1e999'`` (inf), ``'0.1_5'`` and
    full-width digits.
    """

    def parse(text: str) -> float:
        if not (_DECIMAL.fullmatch(text.strip()) and 0 <= float(text) < 1):
            raise argparse.ArgumentTypeError(
                f"{flag} needs a number from 0 up to (not including) 1, got '{text}'"
            )
        return float(text)

    return parse


def parse_models(specs: Sequence[str]) -> dict[str, Any]:
    """``["judge=openai/gpt-4o", "all=scripted/echo"]`` -> roles.

    Provider settings and sampling defaults follow the spec after commas:
    ``agent=openai/m,base_url=URL,base_url=URL2,timeout=30,temperature=0.7`` (a repeated
    ``base_url`` spreads requests over them); such a role becomes a mapping like YAML's
    ``{spec: ..., base_url: ..., temperature: ...}``, which replaces the file's entry for it.

    Raises:
        UsageError: a spec without its role (``--model all=SPEC`` sets every role), or
            options in a spec's ``?n_ctx=`` form (they follow it after commas).
    """
    models: dict[str, Any] = {}
    for item in specs:
        head, *settings = item.split(",")
        role, eq, spec = head.partition("=")
        if not eq or "/" in role:
            raise UsageError(
                f"--model needs ROLE=SPEC, got '{item}' (--model all={item} sets every role)"
            )
        if not role.strip() or not spec.strip():
            raise UsageError(f"--model needs ROLE=SPEC, got '{item}'")
        spec = model_spec(role.strip(), spec.strip())
        if not settings:
            models[role.strip()] = spec
            continue
        models[role.strip()] = _with_settings(spec, settings)
    return models


def model_spec(role: str, spec: str) -> str:
    """A role's model spec from ``--model``, refusing options in its query form
    (``llamacpp/m?n_ctx=16384``): model options follow the spec after commas.

    Raises:
        UsageError: naming the comma form.
    """
    base, mark, query = spec.partition("?")
    if mark:
        options = ",".join(p for p in query.split("&") if p)
        raise UsageError(
            f"--model options follow the spec after commas: --model {role}={base},{options}"
        )
    return spec


def _check_file_specs(models: dict[str, Any], path: str | None) -> None:
    """Refuse a config file's model spec with options in its query form (they sit beside
    the spec: ``{spec: llamacpp/m, n_ctx: 16384}``)."""
    for role, entry in models.items():
        spec = entry.get("spec") if isinstance(entry, dict) else entry
        if isinstance(spec, str) and "?" in spec:
            base, _, query = spec.partition("?")
            beside = ", ".join(p.replace("=", ": ") for p in query.split("&") if p)
            raise UsageError(
                f"config file {path}: models.{role}: options sit beside the spec: "
                f"{{spec: {base}, {beside}}} (not '{spec}')"
            )


def _with_settings(spec: str, settings: Sequence[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"spec": spec}
    for setting in settings:
        key, eq, value = setting.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--model settings are KEY=VALUE after the spec, got '{setting}'")
        key = key.strip().replace("-", "_")
        if key == "base_url" and "base_url" in entry:
            urls = entry["base_url"]
            entry["base_url"] = [*(urls if isinstance(urls, list) else [urls]), value]
        else:
            entry[key] = value.strip()
    return entry


def _flag_fields(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in _COUNTS:
        value = getattr(args, name, None)
        if value is not None:
            fields[name] = _integer(name, value)
    if getattr(args, "memory", None) is not None:
        fields["memory"] = _names(args.memory)
    if getattr(args, "run_dir", None) is not None:
        fields["run_dir"] = args.run_dir  # a string: the config refuses an empty one
    if getattr(args, "preset", None) is not None:
        fields["preset"] = args.preset
    if getattr(args, "no_cache", False):
        fields["cache"] = False
    return fields


def config_from_args(
    args: argparse.Namespace, *, defaults: Callable[[str], dict[str, Any]] | None = None
) -> ExperimentConfig:
    """Merge defaults, the YAML file and the flags into a checked `ExperimentConfig`.

    Raises:
        UsageError: bad YAML, bad numbers or fields that fail validation.
    """
    benchmark = args.benchmark
    model = options_model(benchmark)
    fields: dict[str, Any] = dict(defaults(benchmark)) if defaults else {}
    if getattr(args, "config", None) is not None:
        data = load_yaml(args.config)
        check_file_keys(args.config, data, model, _FIELDS)
        from_file = _split_file(data)
        named = from_file.get("benchmark")
        if benchmark and named is not None and named != benchmark:
            raise UsageError(
                f"config file {args.config} is for benchmark {named!r}, not {benchmark!r}"
            )
        fields.update({k: v for k, v in from_file.items() if k != "options"})
        fields["options"] = {**fields.get("options", {}), **from_file["options"]}
    fields.update(_flag_fields(args))
    _check_file_specs(fields.get("models", {}), getattr(args, "config", None))
    fields["models"] = {**fields.get("models", {}), **parse_models(args.model or [])}
    pairs = option_pairs(args.extra or [])
    check_flag_options(pairs, model, getattr(args, "run_flags", []))
    fields["options"] = {**fields.get("options", {}), **parse_options(args.extra or [])}
    fields["benchmark"] = benchmark or fields.get("benchmark")
    try:
        return ExperimentConfig.model_validate(fields)
    except ValidationError as exc:
        raise UsageError(f"bad config: {error_line(exc)}") from exc
