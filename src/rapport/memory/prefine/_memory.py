"""`PRefineMemory`: the Memory-protocol face of the PRefine loop."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rapport.llm import ModelError, ModelRoles
from rapport.log import MemoryHealth, MemoryItem, Provenance, SessionRecord

from .._history import render_session
from .._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef
from ._loop import Hypothesis, refine


class PRefineMemory(BaseMemory):
    """One compact, schema-agnostic entry of preference hypotheses per user.

    After each session the ``memory`` model runs generate -> verify -> refine; the accepted
    set replaces the memory (when nothing is accepted the prior memory is kept). At session
    start the hypotheses are given as one short line; the agent grounds them into the
    target API's argument values.

    Args:
        models: the ``memory`` role generates and verifies.
        max_rounds: generate/verify rounds per session (at most 3 by design).
        limit: the most hypotheses kept.
        max_chars: the most characters of context given at inference; None (the default)
            gives the whole entry, as the paper does (it stays compact by construction:
            at most ``limit`` hypotheses of at most 90 characters). The report measures the
            resulting token ratio against full history.
    """

    name = "prefine"

    class Options(MemoryOptions):
        max_rounds: int = Field(default=3, ge=1, le=3)
        """Generate/verify rounds per session (at most 3 by design)."""
        limit: int = Field(default=5, ge=1)
        """The most hypotheses kept."""
        max_chars: int | None = Field(default=None, ge=1)
        """The most characters of context given at inference (None: the whole entry)."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self.max_rounds = self.options.max_rounds
        self.limit = self.options.limit
        self.max_chars = self.options.max_chars

    def hypotheses(self, user: UserRef) -> list[Hypothesis]:
        """The user's current hypotheses."""
        return [
            Hypothesis(
                text=item.text,
                level=item.attributes.get("level", "domain"),
                support=int(item.attributes.get("support", 1)),
            )
            for item in self.state(user).items
        ]

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        prefix, text = "Preferences: ", ""
        for h in sorted(self.hypotheses(user), key=lambda h: -h.support):
            line = f"{text}; {h.text}" if text else h.text
            if self.max_chars is not None and len(prefix) + len(line) + 1 > self.max_chars:
                continue  # a shorter one further down may still fit
            text = line
        return f"{prefix}{text}." if text else ""

    def health(self, user: UserRef) -> MemoryHealth:
        """This user's learning calls so far: ``calls``, ``failures`` (the model's output
        stayed invalid) and ``empty`` (nothing was accepted; the prior memory was kept)."""
        data = self.state(user).data
        return MemoryHealth(**{k: int(data.get(k, 0)) for k in ("calls", "failures", "empty")})

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        state = self.state(user)
        state.data["calls"] = int(state.data.get("calls", 0)) + 1
        try:
            accepted, rounds = await refine(
                self.models.get("memory"),
                self.hypotheses(user),
                render_session(record),
                max_rounds=self.max_rounds,
                limit=self.limit,
            )
        except ModelError as exc:
            state.data["failures"] = int(state.data.get("failures", 0)) + 1
            state.data["last_error"] = str(exc)[:300]
            return
        state.data["last_rounds"] = [r.model_dump() for r in rounds]
        state.data["rounds_total"] = int(state.data.get("rounds_total", 0)) + len(rounds)
        if not accepted:
            state.data["empty"] = int(state.data.get("empty", 0)) + 1
            return  # keep the prior memory rather than forget everything
        state.items = [
            MemoryItem(
                id=f"h{i}",
                text=h.text,
                provenance=[Provenance(session=record.index, source="prefine")],
                attributes={"level": h.level, "support": h.support},
            )
            for i, h in enumerate(accepted)
        ]
