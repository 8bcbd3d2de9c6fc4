"""A tiny, model-agnostic benchmark for tests and for timing the harness itself."""

from ._benchmark import ScriptedBenchmark, ScriptedEpisode, ScriptedOptions
from ._types import ScriptedOutcome, ScriptedTask

__all__ = [
    "ScriptedBenchmark",
    "ScriptedEpisode",
    "ScriptedOptions",
    "ScriptedOutcome",
    "ScriptedTask",
]
