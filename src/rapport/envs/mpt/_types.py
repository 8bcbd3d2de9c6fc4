"""MPT's record types: history and evaluation sessions' tasks and outcomes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rapport.log import BaseOutcome, BaseTask


class MPTHistoryTask(BaseTask):
    """MPT: an earlier session to learn from, replayed as it was written."""

    kind: Literal["mpt_history"] = "mpt_history"
    session: dict[str, Any]
    """The session as the generator or loader wrote it (dialogue, call, domain ...)."""


class MPTEvalTask(BaseTask):
    """MPT: one evaluation instance (an under-specified request for a call)."""

    kind: Literal["mpt_eval"] = "mpt_eval"
    instance: dict[str, Any]
    """The instance as the generator or loader wrote it (dialogue, gold, slots ...)."""
    full_history_tokens: int = 0
    """Tokens of the user's whole history rendered as text (the token-cost reference)."""
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
