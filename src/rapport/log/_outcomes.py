"""What a session produced, typed by benchmark: `SessionRecord.outcome` is one of these.

The outcome is the contract between a benchmark and whatever reads its sessions (its own
scoring and report, memories that learn from them, training). A memory that needs one kind
says so (``Memory.requires``) and the runner refuses a benchmark that does not produce it.
Two questions any memory may ask of any outcome have methods: `topic` and `reward`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, Discriminator, Field, Tag

from ._tasks import Problem


class BaseOutcome(BaseModel):
    """Shared by every outcome."""

    kind: str

    def topic(self) -> str:
        """What the session was about in a few words ("" when nothing says)."""
        return ""

    def reward(self) -> float | None:
        """The session's reward in [0, 1] where the benchmark has one (None otherwise)."""
        return None


class NoOutcome(BaseOutcome):
    """A session that ended before its benchmark could say what it produced."""

    kind: Literal["none"] = "none"


class ScriptedOutcome(BaseOutcome):
    kind: Literal["scripted"] = "scripted"
    word: str
    """The user's favourite word (what ``hit`` looks for)."""


class CollabOutcome(BaseOutcome):
    """MultiSessionCollab: the user's final draft and the problem it answers."""

    kind: Literal["collab"] = "collab"
    draft: str = ""
    """The user's final draft answer (what TS grades)."""
    answer: str
    problem_id: str
    problem: Problem
    mode: Literal["multiturn", "direct"] = "multiturn"


class GymOutcome(BaseOutcome):
    """A gym episode: its reward, how it went, and what it kept hidden."""

    kind: Literal["gym"] = "gym"
    env: str
    trajectory_reward: float = 0.0
    success: bool = False
    turns_used: int = 0
    horizon: int = 16
    episode_seed: int = 0
    hidden: Any = None
    """The episode's hidden state (the rule, the entity, the intent ...), JSON-able."""
    secrets: list[str] = Field(default_factory=list)
    """Names that give the episode's answer away."""
    rules: str = ""
    """The gym's instructions as the agent saw them."""
    moves: list[str] = Field(default_factory=list)
    """An example message per move the gym takes."""
    talks: bool = True
    """Whether someone answers questions in words in this gym."""
    resampled: int = 0
    """Agent replies asked again because they repeated an earlier move."""

    def topic(self) -> str:
        return self.env

    def reward(self) -> float | None:
        return self.trajectory_reward


class MPTHistoryOutcome(BaseOutcome):
    """MPT: a replayed history session."""

    kind: Literal["mpt_history"] = "mpt_history"
    domain: str = ""

    def topic(self) -> str:
        return self.domain


class MPTEvalOutcome(BaseOutcome):
    """MPT: the call the agent predicted for one instance, with what scoring needs."""

    kind: Literal["mpt_eval"] = "mpt_eval"
    challenge: str
    query_type: str
    domain: str
    variant: bool = False
    api_schema: dict[str, Any] = Field(default_factory=dict)
    """The target API's schema (JSON)."""
    predicted: dict[str, Any] | None = None
    predicted_name: str | None = None
    """The function the agent called (None: the instance fixed it to the gold function)."""
    valid: bool = False
    gold: dict[str, Any] = Field(default_factory=dict)
    allowed: dict[str, list[Any]] = Field(default_factory=dict)
    """Every gold slot with its allowed values (the release's product of gold calls);
    empty: the gold call's own values."""
    pref_slots: list[str] = Field(default_factory=list)
    pref_map: dict[str, list[str]] = Field(default_factory=dict)
    """The preference slots of every function the agent was shown (for extra-slot checks)."""
    difficulty: str = ""
    """The release's difficulty (easy / medium / hard); empty for generated users."""
    focal_slots: list[str] = Field(default_factory=list)
    open_slots: list[str] = Field(default_factory=list)
    history_sessions: int = 0
    full_history_tokens: int = 0
    """Tokens of the user's whole history as text (what ``token_ratio`` divides by)."""
    token_method: str = ""

    def topic(self) -> str:
        return self.domain


class PrefixOutcome(BaseOutcome):
    """PrefIx: the task played, its accuracy and preference alignment."""

    kind: Literal["prefix"] = "prefix"
    task_id: str
    settings: list[str] = Field(default_factory=list)
    dropped: bool = False
    """Coarsening dropped the task and its stand-ins: nothing was played."""
    instruction: str = ""
    failures: dict[str, int] = Field(default_factory=dict)
    accuracy: dict[str, Any] | None = None
    alignment: list[dict[str, Any]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    judge_runs: int = 0
    """Samples each judge took of this session (first greedy, the rest sampled)."""
    reliability: str = ""
    """The judge-stability protocol of the run: ``repeats`` or ``paper``."""
    task_data: str = ""
    """Where the BFCL task came from (``bfcl-eval 2026.3.23 (installed, v4)``)."""
    instruction_source: str = ""
    """Where the task's coarse instruction came from: the user model, or the paper's fixed
    tasks (with the file)."""

    def topic(self) -> str:
        return self.task_id


class GenericOutcome(BaseOutcome):
    """The outcome of a benchmark outside rapport: its own kind and free data."""

    kind: str = "generic"
    data: dict[str, Any] = Field(default_factory=dict)


KNOWN_OUTCOMES: dict[str, type[BaseOutcome]] = {
    "none": NoOutcome,
    "scripted": ScriptedOutcome,
    "collab": CollabOutcome,
    "gym": GymOutcome,
    "mpt_history": MPTHistoryOutcome,
    "mpt_eval": MPTEvalOutcome,
    "prefix": PrefixOutcome,
}


def _outcome_tag(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in KNOWN_OUTCOMES else "generic"


Outcome = Annotated[
    Annotated[NoOutcome, Tag("none")]
    | Annotated[ScriptedOutcome, Tag("scripted")]
    | Annotated[CollabOutcome, Tag("collab")]
    | Annotated[GymOutcome, Tag("gym")]
    | Annotated[MPTHistoryOutcome, Tag("mpt_history")]
    | Annotated[MPTEvalOutcome, Tag("mpt_eval")]
    | Annotated[PrefixOutcome, Tag("prefix")]
    | Annotated[GenericOutcome, Tag("generic")],
    Discriminator(_outcome_tag),
]


def as_outcome(value: BaseOutcome) -> Outcome:
    """An outcome the run log can hold: rapport's own types as they are, any other
    `BaseOutcome` subclass (a plug-in's) as a `GenericOutcome` keeping its fields."""
    if type(value) in KNOWN_OUTCOMES.values() or isinstance(value, GenericOutcome):
        return cast(Outcome, value)
    return GenericOutcome(kind=value.kind, data=value.model_dump(mode="json", exclude={"kind"}))
