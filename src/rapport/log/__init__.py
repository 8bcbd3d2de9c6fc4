"""The run log: typed records shared by the runner, store, report and training."""

from ._events import (
    DraftUpdateEvent,
    EnforcementEvent,
    ErrorEvent,
    Event,
    JudgeEvent,
    NoteEvent,
    PreferenceVerdictEvent,
    RecallEvent,
    RewardEvent,
    ToolCallEvent,
)
from ._records import (
    ExperimentConfig,
    MemoryItem,
    MemoryState,
    MemoryVersion,
    Provenance,
    Run,
    SessionRecord,
    Speaker,
    Turn,
    UserRecord,
)

__all__ = [
    "DraftUpdateEvent",
    "EnforcementEvent",
    "ErrorEvent",
    "Event",
    "ExperimentConfig",
    "JudgeEvent",
    "MemoryItem",
    "MemoryState",
    "MemoryVersion",
    "NoteEvent",
    "PreferenceVerdictEvent",
    "Provenance",
    "RecallEvent",
    "RewardEvent",
    "Run",
    "SessionRecord",
    "Speaker",
    "ToolCallEvent",
    "Turn",
    "UserRecord",
]
