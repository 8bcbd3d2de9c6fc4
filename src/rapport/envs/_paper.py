"""What a benchmark's paper fixes, setting by setting, beside what a run does.

A benchmark declares its paper's protocol as `PaperSetting` rows (``Benchmark.paper_protocol``,
kept in its ``_options.py``): the setting, the paper's value and where the paper (or its
authors' code) fixes it, the option that sets it in rapport, and how to read a run's value
from its config. `protocol_rows` lays them beside a config: ``rapport protocol BENCH`` prints
them for the defaults (or a ``--config``), ``rapport run --plan`` and every report name the
rows that differ, and docs' tables of differences are tested against them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from rapport.log import ExperimentConfig

if TYPE_CHECKING:
    from ._protocol import Benchmark

Reader = Callable[[ExperimentConfig], Any]
"""Reads a run's value of a setting from its resolved config (preset applied)."""


@dataclass(frozen=True)
class PaperSetting:
    """One setting a paper fixes.

    Args:
        name: the setting in the field's words ("sessions per user").
        paper: the paper's value, compared with ``==`` to the run's (JSON-like: numbers,
            strings, lists, mappings, None).
        source: where it is fixed: a section, table or figure of the paper ("§5.1",
            "Table 2", "App. D") or a file of the authors' code.
        option: how a run sets it (``--sessions``, ``options.max_turns``,
            ``memory_options.reflection.form``).
        read: the run's value from its config.
        note: why rapport's default differs, or how the paper's value is reached (a
            checkout, a served model); shown beside the row.
        matches: a comparison other than ``==`` (a tolerance, a set, "any served model").
    """

    name: str
    paper: Any
    source: str
    option: str
    read: Reader
    note: str = ""
    matches: Callable[[Any, Any], bool] | None = None

    def same(self, value: Any) -> bool:
        """Whether a run's value is the paper's."""
        if self.matches is not None:
            return self.matches(self.paper, value)
        return bool(value == self.paper)


@dataclass(frozen=True)
class ProtocolRow:
    """A `PaperSetting` beside one config's value."""

    setting: PaperSetting
    value: Any
    error: str = ""
    """Why the run's value could not be read (bad options, say); the row then differs."""

    @property
    def same(self) -> bool:
        """Whether the run does what the paper does here."""
        return not self.error and self.setting.same(self.value)

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON: setting, paper, source, ours, option, same, note."""
        s = self.setting
        return {
            "setting": s.name,
            "paper": s.paper,
            "source": s.source,
            "ours": self.error or self.value,
            "option": s.option,
            "same": self.same,
            "note": s.note,
        }


def protocol_rows(benchmark: type[Benchmark], config: ExperimentConfig) -> list[ProtocolRow]:
    """Each setting the benchmark's paper fixes, with the config's value (its preset
    applied first)."""
    from ._presets import apply_preset

    resolved = apply_preset(config)
    rows = []
    for setting in benchmark.paper_protocol:
        try:
            rows.append(ProtocolRow(setting, setting.read(resolved)))
        except (ValueError, KeyError, TypeError) as exc:
            rows.append(ProtocolRow(setting, None, error=" ".join(str(exc).split())[:200]))
    return rows


def differing(benchmark: type[Benchmark], config: ExperimentConfig) -> list[ProtocolRow]:
    """The rows where the config does not do what the paper does."""
    return [row for row in protocol_rows(benchmark, config) if not row.same]


# Readers for the common kinds of setting.


def generic(name: str) -> Reader:
    """A field of the config itself (``users``, ``sessions``, ``max_turns`` ...)."""
    return lambda config: getattr(config, name)


def option(model: type[BaseModel], name: str) -> Reader:
    """A benchmark option, as the benchmark reads it through its options model (the
    model's default where the config gives none)."""
    if name not in model.model_fields:
        raise KeyError(f"{model.__name__} has no option '{name}'")

    def read(config: ExperimentConfig) -> Any:
        return model.model_validate(config.options).model_dump(mode="json")[name]

    return read


def memory_option(method: str, name: str, default: Any = None) -> Reader:
    """A memory method's option as a run lays it: the benchmark's protocol defaults, then
    the preset's, then the config's own."""

    def read(config: ExperimentConfig) -> Any:
        from ._presets import memory_options_for
        from ._registry import benchmark_class

        defaults = benchmark_class(config.benchmark).memory_defaults
        layered = memory_options_for(config, defaults, {method})
        return layered.get(method, {}).get(name, default)

    return read


def model_of(role: str) -> Reader:
    """The model spec a role runs on (``all``'s where the role has none)."""
    return lambda config: config.models.get(role) or config.models.get("all")


def one_of(*values: Any) -> Callable[[Any, Any], bool]:
    """A comparison where any of several values is the paper's (a paper that allows a
    range of equivalent settings)."""
    return lambda _paper, value: value in values


def at_least(paper: Any, value: Any) -> bool:
    """A comparison for budgets: the run's is at least the paper's."""
    return value is not None and value >= paper


def render_rows(rows: Sequence[ProtocolRow]) -> list[Mapping[str, Any]]:
    """The rows as JSON objects, in declaration order."""
    return [row.as_dict() for row in rows]
