"""What a benchmark is: users, their ordered sessions, an episode per session, its scores.

A benchmark never writes a session loop. It supplies an `Episode` (its user's or its
environment's side of one session) and the runner's orchestrator plays it: memory context
once, recall before every agent call, the agent call itself, the record, the accounting and
one error policy for every benchmark.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, get_args

from pydantic import BaseModel
from pydantic.json_schema import JsonDict

from rapport.llm import GenerateConfig, Message, ModelOutput, ModelRoles, ToolCall, ToolSpec
from rapport.log import (
    BaseOutcome,
    Condition,
    Event,
    ExperimentConfig,
    Metric,
    NoteEvent,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    Speaker,
    StopEvent,
    StopReason,
    Table,
    Turn,
    UserSpec,
    plain_metrics,
)

if TYPE_CHECKING:
    from ._caps import SessionCaps
    from ._paper import PaperSetting

GenericSetting = Literal["users", "sessions", "max_turns"]
"""The run settings every config has, which a benchmark may or may not use."""
GENERIC_SETTINGS: tuple[GenericSetting, ...] = get_args(GenericSetting)


class SessionFailure(Exception):
    """A session cannot go on; it is recorded with status ``error`` and this ``where``.

    Episodes raise it for failures they recognise (a user simulator that leaked the
    preference it must hide, say); the orchestrator raises it for everything else.
    """

    def __init__(self, where: str, message: str, *, error_type: str = "") -> None:
        super().__init__(message)
        self.where = where
        self.error_type = error_type or type(self).__name__


PAPER_DATA = "paper_data"
"""The key, in an option field's ``json_schema_extra``, that marks it as reading a paper's
published data or text from a path; its value says what the paper uses and how to give it.
Reports list such options apart: given, as the data the run read; left at rapport's own, as
a difference from the paper."""


def paper_data(what: str) -> JsonDict:
    """``json_schema_extra`` for an option that reads the paper's data (see `PAPER_DATA`)."""
    return {PAPER_DATA: what}


@dataclass
class AgentRequest:
    """The agent call an episode wants next."""

    messages: list[Message]
    """The conversation as the agent sees it (no system prompt: the agent adds it)."""
    instructions: str
    """The task instructions that open the system prompt."""
    tools: list[ToolSpec] | None = None
    schema: type[BaseModel] | None = None
    config: GenerateConfig | None = None
    recall_in: Literal["turn", "system", "first"] = "turn"
    """Where this turn's recalled memory goes: a system message after the conversation
    (``turn``), the system prompt beside the session's memory context (``system``), or
    before the text of the conversation's first message (``first``)."""
    first_join: str = "\n\n"
    """What separates the recall from the first message's text under ``first``."""
    context_template: Callable[[str], str] | None = None
    """The system prompt with memory's session context in it, where the benchmark's own
    prompt has a place for it; None: `instructions`, then the context under its heading."""


@dataclass
class SessionLog:
    """The session's record as an episode writes to it: turns and events, in order."""

    record: SessionRecord
    notes: list[str] = field(default_factory=list)

    @property
    def next_turn(self) -> int:
        """The index the next turn will get."""
        return len(self.record.turns)

    def say(self, speaker: Speaker, text: str, tool_calls: list[ToolCall] | None = None) -> int:
        """Append a turn; returns its index."""
        index = self.next_turn
        self.record.turns.append(
            Turn(index=index, speaker=speaker, text=text, tool_calls=list(tool_calls or []))
        )
        return index

    def event(self, event: Event) -> None:
        """Append an event."""
        self.record.events.append(event)

    def note(self, text: str, turn: int | None = None) -> None:
        """Append a free-text note (a dropped task's reason ...)."""
        self.record.events.append(NoteEvent(turn=turn, text=text))

    def stop(self, reason: StopReason, detail: str = "") -> None:
        """Record why the conversation ended."""
        self.record.events.append(StopEvent(turn=self.next_turn, reason=reason, detail=detail))


class Episode(ABC):
    """One session seen from the user's or environment's side.

    The orchestrator calls `start` once, then while not `done`: `request` (the next agent
    call), the agent (asked again while `retry` returns a config), and `respond` with its
    output; then `finish` (post-session work such as judging) and `outcome`. Each method
    may raise `SessionFailure`; a model error or any other exception is recorded the same
    way by the orchestrator.

    The orchestrator owns the turn cap: it counts the agent's turns (``agent_turns``) and,
    once ``turn_cap`` of them have been answered and the episode is not done, ends the
    conversation with a `StopEvent`. An episode reads `at_cap` to know that the reply it is
    writing is the last one.

    Attributes:
        info: what memory's ``context`` is told about the session.
        done: set once the session is over (the user stopped, the environment ended ...).
        turn_cap: the most agent turns (the run's ``max_turns`` where the benchmark uses
            it; None: no cap).
        agent_turns: agent turns taken so far (the orchestrator counts them).
    """

    info: SessionInfo
    done: bool = False
    turn_cap: int | None = None
    agent_turns: int = 0

    @property
    def at_cap(self) -> bool:
        """Whether the agent has taken its last allowed turn."""
        return self.turn_cap is not None and self.agent_turns >= self.turn_cap

    async def start(self, log: SessionLog) -> None:  # noqa: B027 (optional hook)
        """Open the session (the user's first message, the environment's task ...)."""

    @abstractmethod
    def request(self) -> AgentRequest:
        """The next agent call."""

    def retry(self, output: ModelOutput, attempt: int) -> GenerateConfig | None:
        """A config to ask the agent again with (0-based ``attempt``), or None to keep it."""
        return None

    @abstractmethod
    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        """Take the agent's output: log its turn and the user's or environment's reply."""

    async def finish(self, log: SessionLog) -> None:  # noqa: B027 (optional hook)
        """Work after the conversation (judges ...); skipped when the session failed."""

    @abstractmethod
    def outcome(self) -> BaseOutcome:
        """What the session produced (called even when it failed part-way)."""


class Benchmark(ABC):
    """A benchmark: users, each user's ordered sessions, an episode per session, scores.

    Subclasses set ``name`` and the class-level report facts (``declared_metrics``, or
    ``metrics`` and ``lower_is_better`` alone; ``produces``, `report_tables`), which the
    report reads from the registered class without building an instance.
    """

    name: ClassVar[str]
    declared_metrics: ClassVar[tuple[Metric, ...]] = ()
    """Each metric declared once, in report order: what a value is computed over, how values
    are reduced, which way is better. Setting it sets ``metrics`` and ``lower_is_better``."""
    metrics: ClassVar[tuple[str, ...]] = ()
    """The metrics in report order (empty: those the scores hold, sorted)."""
    lower_is_better: ClassVar[frozenset[str]] = frozenset()
    presets: ClassVar[tuple[Any, ...]] = ()
    """Its named adaptations of the paper's protocol (`Preset` objects, ``--preset NAME``),
    registered with it."""
    produces: ClassVar[tuple[type[BaseOutcome], ...]] = ()
    """The outcome types its sessions produce (memories that need one are checked)."""
    roles: ClassVar[tuple[str, ...] | None] = None
    """The model roles its episodes ask for besides ``agent`` (``judge`` stands for every
    judge role). None: not said, so the runner builds every role and accepts any."""
    options_model: ClassVar[type[BaseModel] | None] = None
    """The model that validates ``config.options`` (``rapport run NAME --help`` lists its
    fields); None: not said."""
    memory_defaults: ClassVar[dict[str, dict[str, Any]]] = {}
    """Memory options its paper's protocol sets (method -> options), under a preset's and
    a run's own."""
    role_defaults: ClassVar[dict[str, str]] = {}
    """Roles that run on another role's model where the config names none (role -> the
    role it takes its model from): MSC's agent writes and picks its own notes
    (``{"memory": "agent"}``). `apply_preset` lays them into the config."""
    paper_protocol: ClassVar[tuple[PaperSetting, ...]] = ()
    """The settings its paper fixes, each with the paper's value, source and the option
    that sets it (`rapport protocol NAME` prints them beside a config's values)."""
    uses: ClassVar[frozenset[GenericSetting]] = frozenset(GENERIC_SETTINGS)
    """The generic run settings it honours (``users``, ``sessions``, ``max_turns``); a run
    that sets one it does not use is refused."""

    @classmethod
    def unused_settings(cls, config: ExperimentConfig) -> list[GenericSetting]:
        """The generic settings a config sets (explicitly) that this benchmark ignores."""
        return [s for s in GENERIC_SETTINGS if s in config.model_fields_set and s not in cls.uses]

    @classmethod
    @abstractmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        """Build from a config; ``config.options`` is validated by the benchmark.

        Raises:
            pydantic.ValidationError: an unknown option or a bad value.
            ValueError: data the options name cannot be read.
        """

    @classmethod
    def session_series(
        cls, config: ExperimentConfig, records: Sequence[SessionRecord]
    ) -> list[tuple[str, int] | None] | None:
        """Where each session sits in per-session charts when a condition's sessions form
        several series (a study's study types): per record, the series' name and the
        session's position in it (0-based); None for all: one series per condition, by
        session index."""
        return None

    def protocol_memory_options(self) -> dict[str, dict[str, Any]]:
        """The memory options this run's protocol sets: `memory_defaults`, and what the
        run's own options add to them (a checkout the memory reads too)."""
        return {method: dict(options) for method, options in self.memory_defaults.items()}

    def conditions(self, config: ExperimentConfig) -> list[Condition]:
        """The run's conditions (default: one per memory method, named after it)."""
        return default_conditions(config)

    def truth(self, user: UserSpec, condition: Condition) -> str:
        """The user's true preferences in words under a condition (the oracle's only input)."""
        return ""

    def session_caps(self, spec: SessionSpec) -> SessionCaps | None:
        """The most model calls and completion tokens per role one session can take under
        this run's protocol (``rapport run --plan`` estimates a run from it); None: not
        declared. It must read nothing a run would not (no model, no weights)."""
        return None

    def default_users(self) -> int | None:
        """How many users a run takes when its config does not say: all of a fixed set's,
        say (None: the config's default)."""
        return None

    @abstractmethod
    def users(self, n: int, seed: int) -> list[UserSpec]:
        """The run's users."""

    @abstractmethod
    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """A user's sessions in order (the same under every condition)."""

    @abstractmethod
    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> Episode:
        """The episode that plays one session."""

    @abstractmethod
    def score(self, record: SessionRecord) -> dict[str, float]:
        """A finished session's scores, from its record alone."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "declared_metrics" in cls.__dict__:
            cls.metrics = tuple(m.name for m in cls.declared_metrics)
            cls.lower_is_better = frozenset(
                m.name for m in cls.declared_metrics if m.lower_is_better
            )

    @classmethod
    def metric_declarations(cls) -> tuple[Metric, ...]:
        """The declared metrics; one that names only ``metrics`` gets plain declarations."""
        return cls.declared_metrics or plain_metrics(cls.metrics, cls.lower_is_better)

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """Tables the benchmark adds to its report (from the records alone)."""
        return []

    @classmethod
    def across_runs_tables(cls, runs: Mapping[str, Sequence[SessionRecord]]) -> list[Table]:
        """Tables over several runs of the benchmark (label -> records), as its paper lays
        out results across models (``rapport compare --paper-tables``); none by default."""
        return []


def default_conditions(config: ExperimentConfig) -> list[Condition]:
    """One condition per memory method, named after it."""
    return [Condition(name=m, memory=m) for m in config.memory]
