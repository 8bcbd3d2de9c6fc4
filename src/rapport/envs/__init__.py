"""The benchmarks: collab, mpt, prefix, gyms."""

from ._protocol import Benchmark, Condition, SessionSpec, UserSpec, default_conditions
from ._registry import BENCHMARKS, UnknownBenchmarkError, conditions_for, create_benchmark

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Condition",
    "SessionSpec",
    "UnknownBenchmarkError",
    "UserSpec",
    "conditions_for",
    "create_benchmark",
    "default_conditions",
]
