"""The benchmarks (collab, mpt, prefix, gyms, scripted) and what they share: the `Benchmark`
base class and the `Episode` an orchestrator plays."""

from rapport.log import Condition, SessionSpec, UserSpec

from ._protocol import (
    AgentRequest,
    Benchmark,
    Episode,
    SessionFailure,
    SessionLog,
    default_conditions,
)
from ._registry import (
    BENCHMARKS,
    PRESETS,
    UnknownBenchmarkError,
    benchmark_class,
    conditions_for,
    create_benchmark,
    register_benchmark,
    register_preset,
    registered_presets,
)

__all__ = [
    "BENCHMARKS",
    "PRESETS",
    "AgentRequest",
    "Benchmark",
    "Condition",
    "Episode",
    "SessionFailure",
    "SessionLog",
    "SessionSpec",
    "UnknownBenchmarkError",
    "UserSpec",
    "benchmark_class",
    "conditions_for",
    "create_benchmark",
    "default_conditions",
    "register_benchmark",
    "register_preset",
    "registered_presets",
]
