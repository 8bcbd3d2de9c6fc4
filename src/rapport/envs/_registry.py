"""Benchmarks, registered lazily as ``module:attr`` (a `Benchmark` subclass each)."""

from __future__ import annotations

import inspect
from typing import Any

from rapport.llm import load_entry, load_plugins
from rapport.log import Condition, ExperimentConfig

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


class UnknownBenchmarkError(ValueError):
    """A benchmark name that is not registered."""


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


def create_benchmark(config: ExperimentConfig) -> Benchmark:
    """Build the benchmark a config names (its options validated by the benchmark).

    Raises:
        UnknownBenchmarkError: the name is not registered.
        pydantic.ValidationError: bad benchmark options.
    """
    return benchmark_class(config.benchmark).from_config(config)


def conditions_for(benchmark: Benchmark, config: ExperimentConfig) -> list[Condition]:
    """The benchmark's conditions for this config."""
    return list(benchmark.conditions(config))
