"""The trivial memories: `none` (nothing carried over) and `oracle` (the true preferences)."""

from __future__ import annotations

from rapport.log import MemoryItem, MemoryState, Provenance

from ._protocol import BaseMemory, SessionInfo, UserRef


class NoMemory(BaseMemory):
    """Carries nothing from one session to the next: the lower bound."""

    name = "none"
    roles = ()
    learns = False


class OracleMemory(BaseMemory):
    """Puts the user's true preference descriptions in the system prompt: the upper bound.

    Nothing is learned; the state records what was shown, with the session it was shown in.
    """

    name = "oracle"
    roles = ()
    learns = False

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        if user.truth:
            item = MemoryItem(
                id="truth",
                text=user.truth,
                provenance=[Provenance(session=session.index, source="truth")],
            )
            self._states[user.id] = MemoryState(items=[item])
        return user.truth
