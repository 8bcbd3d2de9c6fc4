"""What a session produced: `SessionRecord.outcome` is a subclass of `BaseOutcome`.

The outcome is the contract between a benchmark and whatever reads its sessions (its own
scoring and report, memories that learn from them, training). Each benchmark defines its
outcome types in its own folder; they register by ``kind`` when defined. A memory that needs
something of a session declares it as a protocol of its own, which the benchmark's outcome
implements (``Memory.requires``), and the runner refuses a benchmark that produces none.
Two questions any memory may ask of any outcome have methods: `topic` and `reward`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, SerializeAsAny

from ._kinds import KindRegistry

OUTCOMES: KindRegistry[BaseOutcome] = KindRegistry("outcome")


class BaseOutcome(BaseModel):
    """Shared by every outcome."""

    kind: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        OUTCOMES.add(cls)

    def topic(self) -> str:
        """What the session was about in a few words ("" when nothing says)."""
        return ""

    def regime(self) -> str:
        """The part of the evaluation the session belongs to, in the benchmark's words
        (MPT's query type, which its metrics are declared on; "" when it has none)."""
        return ""

    def reward(self) -> float | None:
        """The session's reward in [0, 1] where the benchmark has one (None otherwise)."""
        return None


class NoOutcome(BaseOutcome):
    """A session that ended before its benchmark could say what it produced."""

    kind: Literal["none"] = "none"


class GenericOutcome(BaseOutcome):
    """An outcome of a kind no loaded module registered: every field is kept."""

    model_config = ConfigDict(extra="allow")
    kind: str = "generic"


OUTCOMES.fallback = GenericOutcome

Outcome = Annotated[SerializeAsAny[BaseOutcome], BeforeValidator(OUTCOMES.parse)]
"""An outcome field: any registered outcome type, read back by its ``kind``."""
