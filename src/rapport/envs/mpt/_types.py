"""MPT's record types: calls, utterances, history sessions and evaluation instances, and the
tasks and outcomes built from them.

Field names are the keys the generator and the release builder write (and that stored runs
hold), so a plain JSON object of either reads into these models unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from rapport.log import BaseOutcome, BaseTask


class Call(BaseModel):
    """One function call: its name and its arguments (any JSON value each)."""

    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class Utterance(BaseModel):
    """One turn of a dialogue."""

    model_config = ConfigDict(extra="forbid")

    role: str
    """``user`` or ``assistant``."""
    text: str


class MPTHistorySession(BaseModel):
    """An earlier session of a user: its dialogue and the calls it executed."""

    model_config = ConfigDict(extra="forbid")

    index: int
    domain: str
    """The domain of its (first) call; ``chat`` for a release session without one."""
    dialogue: list[Utterance]
    call: Call
    """The executed call (the first one where the session has several)."""
    calls: list[Call] = Field(default_factory=list)
    """Every executed call, in order (release sessions; empty: just `call`)."""
    result: str = ""
    """What the executed calls returned, as the replay shows it."""
    revealed: dict[str, str] = Field(default_factory=dict)
    """Preference group -> option the session's call shows (generated users)."""
    stated: list[str] = Field(default_factory=list)
    """The revealed groups the user also says outright (generated users)."""
    dialogue_id: str | int = ""
    """The release's dialogue id."""
    preference_utterance: str = ""
    """The release's preference utterances of the session, joined."""


class MPTInstance(BaseModel):
    """One evaluation instance: an under-specified request and the call that answers it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    challenge: str
    """``recall``, ``induction`` or ``transfer``."""
    query_type: str
    """``context-guided`` / ``context-free`` (generated), ``single-turn`` / ``multi-turn``
    (release)."""
    domain: str
    dialogue: list[Utterance]
    gold: Call
    pref_slots: list[str] = Field(default_factory=list)
    open_slots: list[str] = Field(default_factory=list)
    """Slots the request leaves open (any allowed value counts)."""
    focal_slots: list[str] = Field(default_factory=list)
    """The slots of the preference group the instance was drawn for (generated users)."""
    focal_group: str = ""
    variant: bool = False
    """The target API is a renamed variant of the domain's (generated transfer)."""
    pref_map: dict[str, list[str]] = Field(default_factory=dict)
    """Function -> its preference slots, for every function the agent is shown."""
    allowed: dict[str, list[JsonValue]] = Field(default_factory=dict)
    """Every gold slot with its allowed values (release instances)."""
    gold_calls: list[Call] = Field(default_factory=list)
    """Every gold call: the product of the allowed values (release instances)."""
    difficulty: str = ""
    """The release's difficulty (easy / medium / hard); empty for generated users."""
    source: str = ""
    """``release`` for release instances; empty for generated ones."""
    functions: list[dict[str, JsonValue]] = Field(default_factory=list)
    """The functions the agent may call (OpenAI function JSON); empty: the target API only."""
    api_schema: dict[str, JsonValue] | None = Field(default=None, alias="schema")
    """A stored target API (`ApiSchema.to_json` form), read as key ``schema``."""
    notes: list[str] = Field(default_factory=list)
    """Notes every session of the instance records (inputs whose hash differs ...)."""


class MPTHistoryTask(BaseTask):
    """MPT: an earlier session to learn from, replayed as it was written."""

    kind: Literal["mpt_history"] = "mpt_history"
    session: MPTHistorySession


class MPTEvalTask(BaseTask):
    """MPT: one evaluation instance (an under-specified request for a call)."""

    kind: Literal["mpt_eval"] = "mpt_eval"
    instance: MPTInstance
    full_history_tokens: int = 0
    """Tokens of the user's whole history rendered as text, as characters / 4 (the episode
    counts `history_text` again with the agent model's tokenizer where it has one)."""
    history_text: str = Field(default="", repr=False)
    """The user's whole history rendered as text (the token-cost reference)."""
    history: int = 0
    """How many history sessions came before it."""


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
    api_schema: dict[str, JsonValue] = Field(default_factory=dict)
    """The target API's schema (JSON)."""
    predicted: dict[str, JsonValue] | None = None
    """The predicted call's arguments (None: no valid call)."""
    predicted_name: str | None = None
    """The function the agent called (None: the instance fixed it to the gold function)."""
    valid: bool = False
    gold: Call = Field(default_factory=lambda: Call(name=""))
    allowed: dict[str, list[JsonValue]] = Field(default_factory=dict)
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
    context_tokens: int | None = None
    """Tokens of what memory put in the agent's prompt (None: not counted when the session
    was played; scoring then counts characters / 4)."""
    token_method: str = ""
    """How both counts were made: ``tokenizer: MODEL`` or characters / 4."""
    date_rule: str = ""
    """The rule the run scores dates with (its ``dates`` and ``month_dates`` options, see
    `normalize`); empty: stored before the outcome held it (the scores then name it)."""

    def topic(self) -> str:
        return self.domain

    def regime(self) -> str:
        return self.query_type
