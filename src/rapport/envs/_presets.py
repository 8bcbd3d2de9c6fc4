"""Presets: named adaptations of benchmarks' paper protocols (``--preset NAME``).

A benchmark's defaults are its paper's protocol. A preset bundles the changes some setting
needs (small embedded models: shorter windows, a length rule, capped notes, code-guarded
users) under one name; the run stores the name, and its report says which preset ran and
which options differ from the paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rapport.llm import load_entry
from rapport.log import ExperimentConfig

from ._registry import registered_presets


class UnknownPresetError(ValueError):
    """A preset name that is not registered, or one that has nothing for the benchmark."""


@dataclass(frozen=True)
class Preset:
    """A named set of option changes per benchmark.

    Args:
        name: what ``--preset`` names.
        summary: one sentence saying what it changes and why (``rapport list presets``
            shows it).
        options: benchmark name -> benchmark options the preset sets.
        memory_options: benchmark name -> memory method -> options the preset sets.
    """

    name: str
    summary: str
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    memory_options: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # `rapport list presets` reads an entry's docstring: this preset's is its summary.
        object.__setattr__(self, "__doc__", self.summary)

    def merged(self, other: Preset) -> Preset:
        """One preset of this name with another benchmark's part of it (this one's summary;
        a benchmark in both keeps this one's options)."""
        return Preset(
            name=self.name,
            summary=self.summary,
            options={**other.options, **self.options},
            memory_options={**other.memory_options, **self.memory_options},
        )

    @property
    def benchmarks(self) -> list[str]:
        """The benchmarks the preset has changes for."""
        return sorted({*self.options, *self.memory_options})

    def apply(self, config: ExperimentConfig) -> ExperimentConfig:
        """The config with this preset's benchmark options under the ones it gives itself
        (its memory options are laid by `memory_options_for`, once the run's memories are
        known).

        Raises:
            UnknownPresetError: the preset has nothing for the config's benchmark.
        """
        if config.benchmark not in self.benchmarks:
            raise UnknownPresetError(
                f"preset '{self.name}' has nothing for benchmark '{config.benchmark}' "
                f"(it adapts: {', '.join(self.benchmarks)})"
            )
        options = {**self.options.get(config.benchmark, {}), **config.options}
        return config.model_copy(update={"options": options})


def get_preset(name: str) -> Preset:
    """The registered preset of that name.

    Raises:
        UnknownPresetError: no such preset, or its entry is not a `Preset`.
    """
    presets = registered_presets()
    if name not in presets:
        known = ", ".join(sorted(presets)) or "none"
        raise UnknownPresetError(f"unknown preset '{name}' (known: {known})")
    preset = load_entry(presets[name])
    if not isinstance(preset, Preset):
        raise UnknownPresetError(f"preset '{name}' is not a Preset ({presets[name]!r})")
    return preset


def apply_preset(config: ExperimentConfig) -> ExperimentConfig:
    """The config as its benchmark runs it: its preset applied (none when it names none),
    and the roles the benchmark runs on another role's model named (`with_role_defaults`).

    Raises:
        UnknownPresetError: an unknown preset, or one without changes for the benchmark.
    """
    if config.preset is not None:
        config = get_preset(config.preset).apply(config)
    return with_role_defaults(config)


def with_role_defaults(config: ExperimentConfig) -> ExperimentConfig:
    """The config with each role of the benchmark's ``role_defaults`` that the config does
    not name set to the model (spec and provider settings) of the role it defaults to, when
    the config names that one and a memory of the run asks for the role. Unchanged for an
    unknown benchmark or memory (the run refuses those itself)."""
    from rapport.memory import UnknownMemoryError, memory_roles

    from ._registry import benchmark_class

    try:
        defaults = benchmark_class(config.benchmark).role_defaults
        asked = {r for m in config.memory for r in (memory_roles(m) or ())}
    except (ValueError, LookupError, ImportError, UnknownMemoryError):
        return config
    models, settings = dict(config.models), dict(config.model_settings)
    for role, source in defaults.items():
        if role in models or role in settings or source not in models or role not in asked:
            continue
        models[role] = models[source]
        if source in settings:
            settings[role] = settings[source]
    if models == config.models:
        return config
    return config.model_copy(update={"models": models, "model_settings": settings})


def memory_options_for(
    config: ExperimentConfig, defaults: Mapping[str, Mapping[str, Any]], used: set[str]
) -> dict[str, dict[str, Any]]:
    """The run's memory options, in layers: the benchmark's paper protocol (`defaults`),
    then the preset's, then the config's own; the first two only for the memories in use.

    Raises:
        UnknownPresetError: the config names an unknown preset.
    """
    preset: Mapping[str, Mapping[str, Any]] = {}
    if config.preset is not None:
        preset = get_preset(config.preset).memory_options.get(config.benchmark, {})
    layered: dict[str, dict[str, Any]] = {}
    for method in sorted(used):
        layer = {**defaults.get(method, {}), **preset.get(method, {})}
        if layer:
            layered[method] = layer
    for method, given in config.memory_options.items():
        layered[method] = {**layered.get(method, {}), **given}
    return layered
