"""Benchmarks, registered lazily as ``module:attr`` (a `Benchmark` subclass each)."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

from rapport.llm import load_entry, load_plugins
from rapport.log import Condition, ExperimentConfig, set_kind_loader

from ._protocol import Benchmark

BENCHMARKS: dict[str, Any] = {
    "collab": "rapport.envs.collab:CollabBenchmark",
    "collab-ablation": "rapport.envs.collab:CollabAblationBenchmark",
    "mpt": "rapport.envs.mpt:MPTBenchmark",
    "prefix": "rapport.envs.prefix:PrefixBenchmark",
    "gym": "rapport.envs.gyms:GymBenchmark",
    # Real participants (`rapport study`); never played by `rapport run`.
    "study": "rapport.envs.study:StudyBenchmark",
    # A zero-cost benchmark on the scripted model, for tests and harness benchmarks.
    "scripted": "rapport.envs.scripted:ScriptedBenchmark",
}


PRESETS: dict[str, Any] = {}
"""Named adaptations of benchmarks' paper protocols (``--preset NAME``) registered here: an
object whose docstring's first line says what it changes, or its ``module:attr``. Each
benchmark declares its own (`Benchmark.presets`); installed plug-ins add theirs under the
entry point group ``rapport.presets``."""


class UnknownBenchmarkError(ValueError):
    """A benchmark name that is not registered."""


class UnusedSettingError(ValueError):
    """A run sets a generic setting its benchmark would ignore."""


def benchmark_class(name: str) -> type[Benchmark]:
    """The registered class of a benchmark (imported on first use).

    Raises:
        UnknownBenchmarkError: the name is not registered.
        ImportError: its module cannot be imported.
    """
    if name not in BENCHMARKS:
        load_plugins("rapport.benchmarks", BENCHMARKS)
    if name not in BENCHMARKS and ":" not in name:
        raise UnknownBenchmarkError(f"unknown benchmark '{name}' (known: {', '.join(BENCHMARKS)})")
    entry = BENCHMARKS.get(name, name)
    cls = load_entry(entry)
    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise UnknownBenchmarkError(f"'{entry}' is not a Benchmark subclass")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise UnknownBenchmarkError(f"'{entry}' is abstract (it does not define {missing})")
    return cls


def register_benchmark(name: str, benchmark: Any) -> None:
    """Register a benchmark under ``name``: a `Benchmark` subclass or its ``module:Class``."""
    BENCHMARKS[name] = benchmark


def register_preset(name: str, preset: Any) -> None:
    """Register a preset under ``name`` (an object or its ``module:attr``)."""
    PRESETS[name] = preset


def registered_presets() -> dict[str, Any]:
    """The registered presets: those registered here, those each registered benchmark
    declares (a benchmark whose code cannot be imported declares none) and installed
    plug-ins'."""
    load_plugins("rapport.presets", PRESETS)
    load_plugins("rapport.benchmarks", BENCHMARKS)
    found = dict(PRESETS)
    for entry in list(BENCHMARKS.values()):
        with contextlib.suppress(Exception):
            cls = load_entry(entry)
            if isinstance(cls, type) and issubclass(cls, Benchmark):
                for preset in cls.presets:
                    found[preset.name] = _merged(found.get(preset.name), preset)
    return found


def _merged(have: Any, preset: Any) -> Any:
    """A preset several benchmarks declare parts of, as one (the first declared leads)."""
    from ._presets import Preset

    if isinstance(have, Preset) and isinstance(preset, Preset):
        return have.merged(preset)
    return preset if have is None else have


def create_benchmark(config: ExperimentConfig) -> Benchmark:
    """Build the benchmark a config names (its options validated by the benchmark).

    Raises:
        UnknownBenchmarkError: the name is not registered.
        UnusedSettingError: the config sets a generic setting the benchmark does not use.
        pydantic.ValidationError: bad benchmark options.
    """
    cls = benchmark_class(config.benchmark)
    unused = cls.unused_settings(config)
    if unused:
        flags = ", ".join("--" + s.replace("_", "-") for s in unused)
        raise UnusedSettingError(
            f"benchmark '{config.benchmark}' does not use {flags}: leave "
            f"{'it' if len(unused) == 1 else 'them'} out (its options say what it runs)"
        )
    return cls.from_config(config)


def conditions_for(benchmark: Benchmark, config: ExperimentConfig) -> list[Condition]:
    """The benchmark's conditions for this config."""
    return list(benchmark.conditions(config))


def _import_every_benchmark() -> None:
    """Import every registered benchmark (plug-ins included), so that the task, outcome
    and event kinds they define are known when a stored record names one."""
    load_plugins("rapport.benchmarks", BENCHMARKS)
    for entry in list(BENCHMARKS.values()):
        # A plug-in that cannot be imported here keeps its records generic.
        with contextlib.suppress(Exception):
            load_entry(entry)


set_kind_loader(_import_every_benchmark)
