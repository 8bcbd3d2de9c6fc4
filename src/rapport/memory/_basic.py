"""The trivial memories: `none` (nothing carried over) and `oracle` (the true preferences)."""

from __future__ import annotations

from rapport.log import MemoryItem, MemoryState

from ._protocol import BaseMemory, SessionInfo, UserRef


class NoMemory(BaseMemory):
    """Carries nothing from one session to the next."""

    name = "none"


class OracleMemory(BaseMemory):
    """Puts the user's true preference descriptions in the system prompt: the upper bound."""

    name = "oracle"

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        if user.truth:
            self._states[user.id] = MemoryState(
                items=[MemoryItem(id="truth", text=user.truth)]
            )
        return user.truth
