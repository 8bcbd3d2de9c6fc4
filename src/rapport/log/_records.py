"""The run log: the one contract between runner, store, report, viewer and training."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._calls import ModelCall, ToolCall
from ._events import Event
from ._outcomes import NoOutcome, Outcome
from ._specs import Condition

Speaker = Literal["user", "agent", "tool", "system"]
E = TypeVar("E")


class Turn(BaseModel):
    """One message of a session's conversation."""

    index: int
    speaker: Speaker
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class Provenance(BaseModel):
    """Where a memory item came from."""

    session: int
    """The index of the session that produced it."""
    turn: int | None = None
    source: str = ""
    """Free detail: a trajectory id, a call, an utterance id ..."""


class MemoryItem(BaseModel):
    """One unit of what a memory holds: a note, a hypothesis, an experience, a fact."""

    id: str
    text: str
    provenance: list[Provenance] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Method-specific fields (zone, stage, usage counts, confidence ...)."""


class MemoryState(BaseModel):
    """A memory's full state for one user: enough to restore it on resume."""

    items: list[MemoryItem] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    """Any further state the method needs to restore (JSON-serializable)."""


class MemoryVersion(BaseModel):
    """The state of one user's memory after a session was learned."""

    condition: str
    user_id: str
    version: int
    """Number of sessions learned so far (0: empty)."""
    state: MemoryState = Field(default_factory=MemoryState)
    created_at: float = Field(default_factory=time.time)


class MemoryHealth(BaseModel):
    """How a memory's own model calls have gone for one user (methods that count them:
    a method that swallows a failed extraction rather than raising reports it here)."""

    calls: int = 0
    failures: int = 0
    empty: int = 0
    """Calls that returned nothing to keep."""

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0


class SessionRecord(BaseModel):
    """One session of one user under one condition, as it happened and as it was scored."""

    condition: str
    user_id: str
    index: int
    """The session's position in the user's sequence (0-based)."""
    spec_id: str
    """The problem / task id, shared across conditions (paired comparison)."""
    split: Literal["train", "eval"] = "eval"
    status: Literal["ok", "error"] = "ok"
    turns: list[Turn] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    scores: dict[str, float] = Field(default_factory=dict)
    outcome: Outcome = Field(default_factory=NoOutcome)
    """What the session produced, typed by benchmark (final draft, reward, predicted call ...)."""
    memory_health: MemoryHealth | None = None
    """The memory's own call counts for this user so far (methods that count them)."""
    usage: list[ModelCall] = Field(default_factory=list)
    memory_version: int = 0
    """The memory version the session started from."""
    started_at: float = Field(default_factory=time.time)
    finished_at: float = 0.0

    def events_of(self, kind: type[E]) -> list[E]:
        """The events of one type, in order."""
        return [e for e in self.events if isinstance(e, kind)]


class UserRecord(BaseModel):
    """A user of a run (shared by all its conditions)."""

    user_id: str
    spec: dict[str, Any]


MAX_USERS = 100_000
MAX_SESSIONS = 10_000
MAX_TURNS = 1_000
MAX_CONCURRENCY = 1_024


class RoleModel(BaseModel):
    """A role's provider settings (YAML ``models: {agent: {spec: ..., base_url: ...}}``).

    The settings of role ``all`` are the defaults of every role whose spec has the same
    provider (``openai`` ...); a role's own settings override them one by one.
    """

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    """The role's model spec (None: the one `ExperimentConfig.models` gives it, or ``all``'s)."""
    base_url: str | list[str] | None = None
    """An OpenAI-compatible endpoint, or several (requests go to the least busy)."""
    api_key_env: str | None = None
    """The environment variable holding the key (never the key itself)."""
    timeout: float | None = Field(default=None, gt=0, le=86_400)
    max_retries: int | None = Field(default=None, ge=0, le=20)
    schema_mode: Literal["json_schema", "json_object"] | None = None
    n_ctx: int | None = Field(default=None, ge=256, le=1_048_576)
    n_threads: int | None = Field(default=None, ge=1, le=1_024)

    def options(self) -> dict[str, Any]:
        """The provider options that are set (``spec`` aside)."""
        return self.model_dump(exclude={"spec"}, exclude_none=True)


class Sampling(BaseModel):
    """A role's sampling defaults: each applies to the role's calls whose component does not
    set that field itself (most set ``max_tokens`` for their task; few set ``temperature``).

    In YAML they sit beside the role's spec (``agent: {spec: ..., temperature: 0.7}``), on
    the command line after it (``--model agent=openai/m,temperature=0.7``).
    """

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0, le=5)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1, le=1_048_576)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    """One sampling seed for every call of the role (default: one per call, derived from the
    run seed and the request)."""

    def values(self) -> dict[str, Any]:
        """The defaults that are set."""
        return self.model_dump(exclude_none=True)


SAMPLING_FIELDS = frozenset(Sampling.model_fields)


def role_sampling(sampling: Mapping[str, Sampling], role: str) -> dict[str, Any]:
    """A role's sampling defaults: those of ``all``, overridden one by one by its own."""
    merged: dict[str, Any] = {}
    for name in ("all", role):
        if name in sampling:
            merged.update(sampling[name].values())
    return merged


class ExperimentConfig(BaseModel):
    """One experiment: flags and YAML map onto this; flags override the file."""

    benchmark: str
    """Registered benchmark name (``collab``, ``collab-ablation``, ``mpt``, ``prefix``, ``gym``)."""
    memory: list[str] = Field(default_factory=lambda: ["none"], min_length=1, max_length=100)
    """Memory methods, one condition each (all on the same users, problems and seeds)."""
    users: int = Field(default=3, ge=1, le=MAX_USERS)
    """Simulated users; unset, a benchmark with a fixed set of users (an MPT release) takes
    all of them."""
    sessions: int = Field(default=3, ge=1, le=MAX_SESSIONS)
    """Sessions per user."""
    max_turns: int = Field(default=10, ge=1, le=MAX_TURNS)
    """User-agent turn pairs per session."""
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    run_dir: Path = Path("runs/latest")
    concurrency: int = Field(default=1, ge=1, le=MAX_CONCURRENCY)
    """Users run in parallel."""
    models: dict[str, str] = Field(default_factory=dict)
    """Role -> model spec (``all`` sets the default). A role given as a mapping
    (``{spec: ..., base_url: ..., temperature: ...}``) has its spec here, its provider
    settings in `model_settings` and its sampling defaults in `sampling`."""
    model_settings: dict[str, RoleModel] = Field(default_factory=dict)
    """Role -> provider settings (base URLs, key variable, timeout, retries, ``n_ctx`` ...)."""
    sampling: dict[str, Sampling] = Field(default_factory=dict)
    """Role -> sampling defaults (``all``: every role's), from the ``temperature``, ``top_p``,
    ``max_tokens`` and ``seed`` keys of a role's mapping in `models`. Unlike provider
    settings they change results: a resumed run must keep them."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific options (``problems``, ``env``, ``condition`` ...), validated by it."""
    memory_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per memory method keyword options."""
    cache: bool = True
    """Use the response cache (re-running a finished run then makes no model calls)."""
    preset: str | None = None
    """A named adaptation of the paper's protocol (``small``: for small embedded models);
    None: the paper's protocol. The preset's options go under those the config gives."""

    @field_validator("run_dir", mode="before")
    @classmethod
    def _named_dir(cls, value: Any) -> Any:
        # Path("") is the working directory: an empty name is a mistake, not "here".
        if isinstance(value, str) and not value.strip():
            raise ValueError("run_dir is empty")
        return value

    @model_validator(mode="before")
    @classmethod
    def _split_role_settings(cls, data: Any) -> Any:
        """``models: {agent: {spec: S, temperature: T, base_url: U}}`` -> ``models: {agent: S}``
        + ``sampling: {agent: {temperature: T}}`` + ``model_settings: {agent: {spec: S,
        base_url: U}}``; a mapping without ``spec`` leaves the role on ``all``'s spec."""
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            return data
        settings, sampling = data.get("model_settings") or {}, data.get("sampling") or {}
        if not isinstance(settings, dict) or not isinstance(sampling, dict):
            return data  # the fields' own validation says what is wrong
        models: dict[Any, Any] = {}
        settings, sampling = dict(settings), dict(sampling)
        for role, value in data["models"].items():
            if not isinstance(value, dict):
                models[role] = value
                continue
            provider = {k: v for k, v in value.items() if k not in SAMPLING_FIELDS}
            chosen = {k: v for k, v in value.items() if k in SAMPLING_FIELDS}
            if chosen:
                before = sampling.get(role)
                sampling[role] = {**(before if isinstance(before, dict) else {}), **chosen}
            if provider.get("spec") is not None:
                models[role] = provider["spec"]
            if provider:
                settings[role] = provider
        return {**data, "models": models, "model_settings": settings, "sampling": sampling}


class Run(BaseModel):
    """A run's header."""

    id: str
    benchmark: str
    config: ExperimentConfig
    conditions: list[Condition] = Field(default_factory=list)
    """The run's conditions in order (the report shows them so)."""
    created_at: float = Field(default_factory=time.time)
    rapport_version: str = ""
