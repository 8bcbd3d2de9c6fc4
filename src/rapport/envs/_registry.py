"""Benchmarks, registered lazily as ``module:attr``.

A registered class is built with ``cls.from_config(config)``, validates
``config.options`` into its own options model, and may define
``conditions(config) -> list[Condition]`` (default: one per memory).
"""

from __future__ import annotations

from rapport.llm import load_entry
from rapport.log import ExperimentConfig

from ._protocol import Benchmark, Condition, default_conditions

BENCHMARKS: dict[str, str] = {
    "collab": "rapport.envs.collab:CollabBenchmark",
    "collab-ablation": "rapport.envs.collab:CollabAblationBenchmark",
    "mpt": "rapport.envs.mpt:MPTBenchmark",
    "prefix": "rapport.envs.prefix:PrefixBenchmark",
    "gym": "rapport.envs.gyms:GymBenchmark",
    # A zero-cost benchmark on the scripted model, for tests and harness benchmarks.
    "scripted": "rapport.eval:ScriptedBenchmark",
}


class UnknownBenchmarkError(ValueError):
    """A benchmark name that is not registered."""


def create_benchmark(config: ExperimentConfig) -> Benchmark:
    """Build the benchmark a config names (its options validated by the benchmark).

    Raises:
        UnknownBenchmarkError: the name is not registered.
        pydantic.ValidationError: bad benchmark options.
    """
    if config.benchmark not in BENCHMARKS:
        raise UnknownBenchmarkError(
            f"unknown benchmark '{config.benchmark}' (known: {', '.join(BENCHMARKS)})"
        )
    benchmark: Benchmark = load_entry(BENCHMARKS[config.benchmark]).from_config(config)
    return benchmark


def conditions_for(benchmark: Benchmark, config: ExperimentConfig) -> list[Condition]:
    """The benchmark's conditions for this config."""
    custom = getattr(benchmark, "conditions", None)
    return list(custom(config)) if custom is not None else default_conditions(config)
