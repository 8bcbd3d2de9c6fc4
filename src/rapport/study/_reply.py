"""The agent as the study plays it: a reply whose model fails is tried again with backoff,
and when it still fails the participant is told and decides: try again, or end the session.

A model server that restarts, or a network that drops for a few seconds, then costs the
participant a wait and never their session. Only a prompt that no longer fits the model's
context is not retried (asking again cannot help).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from rapport.agents import Agent
from rapport.eval import one_line
from rapport.llm import ContextFull, Message, Model, ModelError, ModelOutput, TextSink

log = logging.getLogger(__name__)

RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0)
"""The waits before each new try of a failed reply (15 s in all, then the participant is
asked)."""

Decide = Callable[[str], Awaitable[bool]]
"""Tells the participant why the reply failed; True when they ask for another try, False
when they end the session."""


class ReplyAbandoned(ModelError):
    """The agent's reply kept failing and the participant ended the session."""

    role = "agent"


class PatientAgent(Agent):
    """`Agent` whose failed replies are tried again (see the module).

    Args:
        model: the agent's model.
        on_text: where a reply's pieces go while it is generated.
        decide: asks the participant once every try has failed.
        delays: the waits before each new try.
        restart: called before each new try (the page drops the partial reply).
    """

    def __init__(
        self,
        model: Model,
        *,
        on_text: TextSink | None,
        decide: Decide,
        delays: Sequence[float] = RETRY_DELAYS_S,
        restart: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(model, on_text=on_text)
        self.decide, self.delays, self.restart = decide, tuple(delays), restart

    async def respond(self, history: list[Message], **options: Any) -> ModelOutput:
        """The agent's next message; raises `ReplyAbandoned` when the participant ends the
        session instead of waiting for it."""
        while True:
            failed = await self._tries(history, options)
            if isinstance(failed, ModelOutput):
                return failed
            if not await self.decide(one_line(failed)):
                raise ReplyAbandoned(
                    f"no reply after {len(self.delays) + 1} tries ({one_line(failed)}); "
                    "the participant ended the session"
                ) from failed

    async def _tries(
        self, history: list[Message], options: dict[str, Any]
    ) -> ModelOutput | ModelError:
        """The reply, or the last error once every try has failed."""
        last: ModelError | None = None
        for wait in (0.0, *self.delays):
            if last is not None:
                if self.restart is not None:
                    self.restart()
                await asyncio.sleep(wait)  # backoff before asking the model again
            try:
                return await super().respond(history, **options)
            except ContextFull:
                raise
            except ModelError as exc:
                log.warning("agent reply failed, trying again: %s", one_line(exc))
                last = exc
        assert last is not None
        return last
