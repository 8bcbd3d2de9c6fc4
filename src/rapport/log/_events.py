"""Session events: each kind its own small class, registered by its ``kind``.

The events here are written by shared machinery (the orchestrator, the judges, the tool
loop, environments' rewards, the user simulators' guards); a benchmark defines its own
kinds in its folder as subclasses of `BaseEvent`. `SessionRecord.events_of` returns the
events of one type.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SerializeAsAny

from ._kinds import KindRegistry

EVENTS: KindRegistry[BaseEvent] = KindRegistry("event")


class BaseEvent(BaseModel):
    """Shared by every event."""

    kind: str
    turn: int | None = None
    """The turn index the event belongs to (None: the session as a whole)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        EVENTS.add(cls)


class ContextEvent(BaseEvent):
    """What memory put in the agent's system prompt at the start of the session."""

    kind: Literal["context"] = "context"
    text: str


class RecallEvent(BaseEvent):
    """What memory added to the agent's prompt on this turn."""

    kind: Literal["recall"] = "recall"
    text: str


class ToolCallEvent(BaseEvent):
    """A tool call the agent made and what executing it returned."""

    kind: Literal["tool_call"] = "tool_call"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    error: str | None = None
    interaction: bool = False
    """True for interaction tools (confirmation, notices ...), False for system tools."""


class JudgeEvent(BaseEvent):
    """One judge's score on one dimension."""

    kind: Literal["judge"] = "judge"
    judge: str
    """The judge's role (``judge``, ``judge2`` ...)."""
    dimension: str
    score: float
    justification: str = ""
    evidence_turns: list[int] = Field(default_factory=list)
    repeat: int = 0


class RewardEvent(BaseEvent):
    """A per-turn reward from an environment."""

    kind: Literal["reward"] = "reward"
    reward: float
    move: str = ""
    """The move the environment read from the agent's message (``[action] ...``); empty
    when it records none."""


class ErrorEvent(BaseEvent):
    """Something failed; the session carries on or ends with status ``error``."""

    kind: Literal["error"] = "error"
    where: str
    """The component: a model role (``agent``, ``user``, ``judge``, ``memory`` ...), or
    ``memory.context``, ``memory.recall``, ``memory.learn``, ``benchmark``, ``score``."""
    message: str
    error_type: str = ""
    """The exception's class name."""


class NoteEvent(BaseEvent):
    """A free-text annotation (a dropped task's reason ...)."""

    kind: Literal["note"] = "note"
    text: str


class StopReason(StrEnum):
    """Why a conversation ended."""

    USER_ENDED = "user_ended"
    """The user (simulated or real) ended it."""
    TURN_CAP = "turn_cap"
    """The run's turn cap (``max_turns``) was reached."""
    MESSAGE_CAP = "message_cap"
    """The benchmark's own message or step limit was reached."""
    CONTEXT_FULL = "context_full"
    """The agent's prompt no longer fits its model's context."""
    ENVIRONMENT = "environment"
    """The environment ended the episode (an answer, a finish move, the horizon ...)."""
    AGENT_IDLE = "agent_idle"
    """The agent stopped acting and the user had nothing more to add."""


class StopEvent(BaseEvent):
    """Why the conversation ended, once per session."""

    kind: Literal["stop"] = "stop"
    reason: StopReason
    detail: str = ""


class UserGuardEvent(BaseEvent):
    """Code wrote or replaced a simulated user's turn (a role slip, a pasted reply ...)."""

    kind: Literal["user_guard"] = "user_guard"
    reason: str
    """What the user model did and what code did instead."""


class GenericEvent(BaseEvent):
    """An event of a kind no loaded module registered: every field is kept."""

    model_config = ConfigDict(extra="allow")
    kind: str = "generic"


EVENTS.fallback = GenericEvent

Event = Annotated[SerializeAsAny[BaseEvent], BeforeValidator(EVENTS.parse)]
"""An event field: any registered event type, read back by its ``kind``."""
