"""The benchmarks (collab, mpt, prefix, gyms, scripted) and what they share: the `Benchmark`
base class and the `Episode` an orchestrator plays."""

from rapport.log import Condition, SessionSpec, UserSpec

from ._caps import RoleCap, SessionCaps
from ._paper import (
    PaperSetting,
    ProtocolRow,
    differing,
    protocol_rows,
)
from ._presets import Preset, UnknownPresetError, apply_preset, get_preset, memory_options_for
from ._protocol import (
    GENERIC_SETTINGS,
    PAPER_DATA,
    AgentRequest,
    Benchmark,
    Episode,
    GenericSetting,
    SessionFailure,
    SessionLog,
    default_conditions,
    paper_data,
)
from ._registry import (
    BENCHMARKS,
    PRESETS,
    UnknownBenchmarkError,
    UnusedSettingError,
    benchmark_class,
    conditions_for,
    create_benchmark,
    register_benchmark,
    register_preset,
    registered_presets,
)
from ._simulator import UserSimulator, sounds_like_assistant

__all__ = [
    "BENCHMARKS",
    "GENERIC_SETTINGS",
    "PAPER_DATA",
    "PRESETS",
    "AgentRequest",
    "Benchmark",
    "Condition",
    "Episode",
    "GenericSetting",
    "PaperSetting",
    "Preset",
    "ProtocolRow",
    "RoleCap",
    "SessionCaps",
    "SessionFailure",
    "SessionLog",
    "SessionSpec",
    "UnknownBenchmarkError",
    "UnknownPresetError",
    "UnusedSettingError",
    "UserSimulator",
    "UserSpec",
    "apply_preset",
    "benchmark_class",
    "conditions_for",
    "create_benchmark",
    "default_conditions",
    "differing",
    "get_preset",
    "memory_options_for",
    "paper_data",
    "protocol_rows",
    "register_benchmark",
    "register_preset",
    "registered_presets",
    "sounds_like_assistant",
]
