"""What a learner must do: give context at session start, recall each turn, learn after."""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict

from rapport.llm import Message, ModelRoles
from rapport.log import MemoryHealth, MemoryState, SessionInfo, SessionRecord, UserRef

NotesPlacement = Literal["system", "turn"]
"""Where a memory's text goes in the agent's prompt: the system prompt, or a system message
right after the latest message of the conversation."""


@runtime_checkable
class Memory(Protocol):
    """A learner that carries what was learned about a user from one session to the next."""

    name: str
    requires: tuple[type, ...]
    """What it needs of a session's outcome: outcome types or protocols of its own (empty:
    any outcome). The runner refuses a benchmark whose outcomes are none of them."""
    roles: tuple[str, ...] | None
    """The model roles it asks for (None: not said; the runner then builds every role)."""

    def describe(self) -> str:
        """How it retrieves, for the run's provenance: its embedder or search backend
        (``none`` when it retrieves nothing). Builds nothing."""
        ...

    def effective_options(self) -> dict[str, Any]:
        """Its options as it runs with them, defaults included (JSON), for the run's
        provenance."""
        ...

    def notes_in(self) -> NotesPlacement | None:
        """Where both its session context and its per-turn recall go (None: the context in
        the system prompt and the recall where the benchmark puts it)."""
        ...

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        """Text for the agent's system prompt at session start ("" if none)."""
        ...

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        """Text relevant to the conversation so far, added before each agent turn ("" if none)."""
        ...

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        """Update the user's memory from a finished session."""
        ...

    def snapshot(self, user: UserRef) -> MemoryState:
        """The user's memory now: items with ids, text and provenance, plus restorable data."""
        ...

    def restore(self, user: UserRef, state: MemoryState) -> None:
        """Load a snapshot (used when a run resumes)."""
        ...

    def health(self, user: UserRef) -> MemoryHealth | None:
        """Its own model calls for this user so far, where it counts them (else None)."""
        ...


@runtime_checkable
class Pushback(Protocol):
    """An event that marks a user turn pushing back on the agent for breaking one of the
    user's preferences. Memories that learn from pushback read these; a benchmark's
    enforcement event implements it."""

    turn: int | None

    def pushback_preference(self) -> str:
        """The id of the preference the user enforced."""
        ...


def pushbacks(record: SessionRecord) -> list[Pushback]:
    """A session's pushback events, in order."""
    return [e for e in record.events if isinstance(e, Pushback)]


class MemoryOptions(BaseModel):
    """A memory's options (``memory_options`` in the config): unknown names are refused.

    Each method subclasses it with its own fields and names it as its ``Options``.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    notes_in: NotesPlacement | None = None
    """Where this memory's text goes in the agent's prompt: ``system`` (the system prompt),
    ``turn`` (a system message after the latest message); unset: the session context in the
    system prompt and the per-turn recall where the benchmark puts it."""


class BaseMemory:
    """Convenience base: keeps a `MemoryState` per user; subclasses override what they need.

    Args:
        models: the run's model roles; methods that call a model use the ``memory`` role.
        **options: the method's options, validated into its ``Options`` model.

    Raises:
        pydantic.ValidationError: an unknown option or a bad value.
    """

    name = "base"
    requires: ClassVar[tuple[type, ...]] = ()
    roles: ClassVar[tuple[str, ...] | None] = ("memory",)
    """The model roles the method asks for (methods that call no model: none)."""
    learns: ClassVar[bool] = True
    """Whether a user's session can depend on the ones before it (what it learned). One
    that does not (``none``, ``oracle``) lets the runner play a user's sessions
    concurrently, each on its own `fork`."""
    reads_grading: ClassVar[bool] = True
    """Whether `learn` reads what the benchmark decides after the conversation (its
    outcome, scores, the judge's events). One that learns from the conversation alone
    (False) lets the runner grade a session while the user's next session plays."""
    Options: ClassVar[type[MemoryOptions]] = MemoryOptions

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        self.models = models
        self.options = self.Options.model_validate(options)
        self._states: dict[str, MemoryState] = {}

    def state(self, user: UserRef) -> MemoryState:
        """The user's mutable state (created empty)."""
        return self._states.setdefault(user.id, MemoryState())

    def fork(self) -> Self:
        """A copy with the same models and options and its own copy of every user's state,
        for one of several sessions played at once (memories that do not learn)."""
        twin = copy.copy(self)
        twin._states = {k: v.model_copy(deep=True) for k, v in self._states.items()}
        return twin

    def describe(self) -> str:
        return "none"

    def effective_options(self) -> dict[str, Any]:
        return self.options.model_dump(mode="json")

    def notes_in(self) -> NotesPlacement | None:
        return self.options.notes_in

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        return ""

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        return ""

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        return None

    def snapshot(self, user: UserRef) -> MemoryState:
        return self.state(user).model_copy(deep=True)

    def restore(self, user: UserRef, state: MemoryState) -> None:
        self._states[user.id] = state.model_copy(deep=True)

    def health(self, user: UserRef) -> MemoryHealth | None:
        return None
