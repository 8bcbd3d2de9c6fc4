"""The one session loop: every benchmark's episodes are played here.

It owns what every session shares: the memory's context (once) and recall (before each
agent call, with its event), the agent call (asked again while the episode wants), the
record, and one error policy. An agent whose prompt no longer fits its model's context ends
the conversation there (a `StopEvent` says so) and the session is finished and scored as it stands,
as a benchmark scores a model that cannot go on. Any other model error, in any role, ends the
session with status ``error`` and ``where`` set to that role; any other exception in the
benchmark's episode or in the memory is recorded the same way with ``where`` naming the step.
Only an interrupt (Ctrl-C, cancellation) leaves a session unrecorded.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from rapport._errors import error_line
from rapport.agents import Agent
from rapport.envs import AgentRequest, Episode, SessionFailure, SessionLog
from rapport.llm import ContextFull, ModelError, ModelOutput, redact_secrets
from rapport.log import (
    BaseOutcome,
    ContextEvent,
    ErrorEvent,
    NoOutcome,
    RecallEvent,
    SessionRecord,
    StopReason,
    UserRef,
)
from rapport.memory import Memory

T = TypeVar("T")

MAX_AGENT_CALLS = 2000
"""A safety net against an episode that never ends: past this the session is an error."""


def one_line(exc: BaseException | str) -> str:
    """An exception (or a message) as one short line of valid text (pydantic errors condensed,
    prefixed with the model's name; secrets redacted)."""
    return redact_secrets(error_line(exc, title=True))


async def guarded(where: str, step: Awaitable[T]) -> T:
    """Await one step of a session; any failure becomes a `SessionFailure`.

    A model error is located at the role of the model that failed (``agent``, ``user``,
    ``judge``, ``memory`` ...); anything else at ``where``.
    """
    try:
        return await step
    except SessionFailure:
        raise
    except ModelError as exc:
        raise SessionFailure(
            exc.role or where, one_line(exc), error_type=type(exc).__name__
        ) from exc
    except Exception as exc:
        raise SessionFailure(where, one_line(exc), error_type=type(exc).__name__) from exc


def record_failure(record: SessionRecord, failure: SessionFailure) -> None:
    """Mark the session ``error`` with an event saying where and why."""
    record.status = "error"
    record.events.append(
        ErrorEvent(
            turn=len(record.turns),
            where=failure.where,
            message=one_line(failure),
            error_type=failure.error_type,
        )
    )


class Orchestrator:
    """Plays episodes for one user under one condition.

    Args:
        agent: the agent under test.
        memory: the condition's memory.
        user: who the memory is about (truth only for the oracle).
    """

    def __init__(self, agent: Agent, memory: Memory, user: UserRef) -> None:
        self.agent, self.memory, self.user = agent, memory, user

    async def play(self, episode: Episode, record: SessionRecord) -> None:
        """Play the episode into ``record``; a failure is recorded there, never raised."""
        log = await self.converse(episode, record)
        await self.conclude(episode, record, log)

    async def converse(self, episode: Episode, record: SessionRecord) -> SessionLog | None:
        """The conversation alone: memory context, recall, agent and episode turns until
        the episode is done or capped. Returns the log `conclude` goes on with, or None
        when it failed (recorded on ``record``: status ``error``)."""
        log = SessionLog(record)
        try:
            await self._converse(episode, log)
        except SessionFailure as failure:
            record_failure(record, failure)
            return None
        return log

    async def conclude(
        self, episode: Episode, record: SessionRecord, log: SessionLog | None
    ) -> None:
        """The episode's work after a conversation that did not fail (``finish``: judges
        ...), then its outcome (also of a failed one)."""
        if log is not None:
            try:
                await guarded("benchmark", episode.finish(log))
            except SessionFailure as failure:
                record_failure(record, failure)
        record.outcome = self._outcome(episode, record)

    async def _converse(self, episode: Episode, log: SessionLog) -> None:
        await guarded("benchmark", episode.start(log))
        context: str | None = None
        calls = 0
        while not episode.done:
            if context is None:
                context = await guarded(
                    "memory.context", self.memory.context(self.user, episode.info)
                )
                if context.strip():
                    log.event(ContextEvent(text=context))
            request = episode.request()
            recall = await guarded(
                "memory.recall", self.memory.recall(self.user, list(request.messages))
            )
            if recall.strip():
                log.event(RecallEvent(turn=log.next_turn, text=recall))
            try:
                output = await self._ask(episode, request, context, recall)
            except SessionFailure as failure:
                if failure.where != "agent" or not isinstance(failure.__cause__, ContextFull):
                    raise
                log.stop(StopReason.CONTEXT_FULL, one_line(str(failure.__cause__)))
                return
            episode.agent_turns += 1
            await guarded("benchmark", episode.respond(output, log))
            if not episode.done and episode.at_cap:
                log.stop(StopReason.TURN_CAP, f"max_turns {episode.turn_cap}")
                return
            calls += 1
            if calls >= MAX_AGENT_CALLS and not episode.done:
                raise SessionFailure("benchmark", f"no end after {calls} agent calls")

    async def _ask(
        self, episode: Episode, request: AgentRequest, context: str, recall: str
    ) -> ModelOutput:
        config = request.config
        placed = self.memory.notes_in()
        attempt = 0
        while True:
            output = await guarded(
                "agent",
                self.agent.respond(
                    request.messages,
                    instructions=request.instructions,
                    memory_context=context,
                    recall=recall,
                    recall_in=placed or request.recall_in,
                    context_in=placed or "system",
                    context_template=request.context_template,
                    first_join=request.first_join,
                    tools=request.tools,
                    schema=request.schema,
                    config=config,
                ),
            )
            again = episode.retry(output, attempt)
            if again is None:
                return output
            config, attempt = again, attempt + 1

    @staticmethod
    def _outcome(episode: Episode, record: SessionRecord) -> BaseOutcome:
        try:
            return episode.outcome()
        except Exception as exc:
            failure = SessionFailure("benchmark", one_line(exc), error_type=type(exc).__name__)
            record_failure(record, failure)
            return NoOutcome()
