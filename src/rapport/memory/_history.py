"""`full_history`: every past session, verbatim, in the prompt (the token-cost reference)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rapport.llm import ModelRoles
from rapport.log import MemoryItem, Provenance, SessionRecord, render_session

from ._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef


class FullHistoryMemory(BaseMemory):
    """Keeps every learned session's transcript and puts all of them in the prompt.

    Args:
        models: unused (no model calls).
        max_chars: keep only the most recent text beyond this many characters (0: no limit),
            for models whose context window cannot hold a long history.
    """

    name = "full_history"
    roles = ()

    class Options(MemoryOptions):
        max_chars: int = Field(default=0, ge=0)
        """Keep only the most recent text beyond this many characters (0: no limit)."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self.max_chars = self.options.max_chars

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        text = "\n\n".join(item.text for item in self.state(user).items)
        if self.max_chars and len(text) > self.max_chars:
            text = text[-self.max_chars :]
        return text

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        state = self.state(user)
        state.items.append(
            MemoryItem(
                id=f"s{record.index}",
                text=render_session(record),
                provenance=[Provenance(session=record.index, source=record.spec_id)],
            )
        )
