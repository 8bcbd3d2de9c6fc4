"""One MultiSessionCollab session: the simulated user and the agent take turns."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from functools import cache
from importlib import resources
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from rapport.agents import Agent
from rapport.envs import Condition, SessionSpec
from rapport.llm import GenerateConfig, Message, ModelError, ModelRoles, record_calls
from rapport.log import ErrorEvent, NoteEvent, RecallEvent, SessionRecord, Speaker, Turn
from rapport.memory import Memory, SessionInfo, UserRef
from rapport.users import CollabUser, UserSimulator

from ._problems import Problem

T = TypeVar("T")


class SessionSettings(BaseModel):
    """What a condition may change about a session (read from ``Condition.settings``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["multiturn", "direct"] = "multiturn"
    """``direct``: the agent gets the whole problem and answers once, no user simulation."""
    preferences: bool = True
    """False: the simulated user holds no preferences."""


class _SessionFailed(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


@cache
def agent_prompt(name: str) -> str:
    """A packaged agent prompt (``agent``: the collaborator; ``direct``: one-shot solver)."""
    return resources.files("rapport.envs.collab").joinpath(f"prompts/{name}.md").read_text()


def problem_text(problem: Problem) -> str:
    """The problem as the user sees it: the question, then lettered options if any."""
    return problem.prompt()


class CollabSession:
    """Runs one session and fills its `SessionRecord` (never raises on a model error).

    Args:
        spec: the session (its problem in ``task``).
        user: the simulated user's profile.
        problem: the session's problem.
        condition: the condition, whose settings pick the mode.
        max_turns: the most user-agent turn pairs.
        benchmark: the benchmark's name (for `SessionInfo`).
        agent_config: the agent's sampling settings (None: the model's defaults).
    """

    def __init__(
        self,
        spec: SessionSpec,
        user: CollabUser,
        problem: Problem,
        condition: Condition,
        *,
        max_turns: int,
        benchmark: str = "collab",
        agent_config: GenerateConfig | None = None,
    ) -> None:
        self.spec, self.user, self.problem = spec, user, problem
        self.agent_config = agent_config
        self.settings = SessionSettings.model_validate(condition.settings)
        self.max_turns = max_turns
        self.benchmark = benchmark
        self.history: list[Message] = []
        self.draft = ""
        self.record = SessionRecord(
            condition=condition.name,
            user_id=user.id,
            index=spec.index,
            spec_id=spec.id,
            split=spec.split,
        )

    async def run(self, agent: Agent, memory: Memory, models: ModelRoles) -> SessionRecord:
        """Play the session to its end and return the record (status ``error`` on failure)."""
        with record_calls() as calls:
            try:
                if self.settings.mode == "direct":
                    await self._direct(agent, memory)
                else:
                    await self._converse(agent, memory, models)
            except _SessionFailed as exc:
                self._fail(exc.where, str(exc))
        self.record.usage = list(calls)
        self.record.outcome = self._outcome()
        self.record.finished_at = time.time()
        return self.record

    def user_ref(self) -> UserRef:
        """The reference memory sees; its truth is the user's true preferences."""
        return self.user.ref(truth=self.user.truth() if self.settings.preferences else "")

    async def _context(self, memory: Memory, ref: UserRef) -> str:
        info = SessionInfo(
            index=self.spec.index,
            benchmark=self.benchmark,
            task="a multiple-choice question" if self.problem.choices else "a math problem",
        )
        return await _guard("memory.context", memory.context(ref, info))

    async def _direct(self, agent: Agent, memory: Memory) -> None:
        context = await self._context(memory, self.user_ref())
        self._add("user", problem_text(self.problem))
        out = await _guard(
            "agent",
            agent.respond(
                self.history,
                instructions=agent_prompt("direct"),
                memory_context=context,
                config=self.agent_config,
            ),
        )
        self._add("agent", out.text)
        self.draft = out.text.strip()

    async def _converse(self, agent: Agent, memory: Memory, models: ModelRoles) -> None:
        ref = self.user_ref()
        context = await self._context(memory, ref)
        prefs = self.user.preference_objects() if self.settings.preferences else []
        user = UserSimulator(
            models.get("user"),
            persona=self.user.persona,
            problem=problem_text(self.problem),
            preferences=prefs,
        )
        try:
            self._add("user", await _guard("user", user.opening()))
            for pair in range(self.max_turns):
                await self._agent_turn(agent, memory, ref, context)
                reply = await _guard("user", user.react(self.history, turn=len(self.history)))
                self.record.events.extend(reply.events)
                self._add("user", reply.message)
                if reply.stop:
                    self._note("the user stopped")
                    return
                if pair == self.max_turns - 1:
                    self._note(f"max_turns ({self.max_turns}) reached")
        finally:
            self.draft = user.draft

    async def _agent_turn(self, agent: Agent, memory: Memory, ref: UserRef, context: str) -> None:
        recall = await _guard("memory.recall", memory.recall(ref, list(self.history)))
        if recall.strip():
            self.record.events.append(RecallEvent(turn=len(self.history), text=recall))
        out = await _guard(
            "agent",
            agent.respond(
                self.history,
                instructions=agent_prompt("agent"),
                memory_context=context,
                recall=recall,
                config=self.agent_config,
            ),
        )
        self._add("agent", out.text)

    def _add(self, speaker: Speaker, text: str) -> None:
        self.record.turns.append(Turn(index=len(self.record.turns), speaker=speaker, text=text))
        role = "user" if speaker == "user" else "assistant"
        self.history.append(Message(role=role, content=text))

    def _note(self, text: str) -> None:
        self.record.events.append(NoteEvent(turn=None, text=text))

    def _fail(self, where: str, message: str) -> None:
        self.record.status = "error"
        self.record.events.append(
            ErrorEvent(turn=len(self.record.turns), where=where, message=message)
        )

    def _outcome(self) -> dict[str, object]:
        return {
            "draft": self.draft,
            "answer": self.problem.answer,
            "problem_id": self.problem.id,
            "problem": _problem_data(self.problem),
            "mode": self.settings.mode,
        }


async def _guard(where: str, call: Awaitable[T]) -> T:
    """Await a model-backed call; a model failure ends the session as an error."""
    try:
        return await call
    except ModelError as exc:
        raise _SessionFailed(where, f"{type(exc).__name__}: {exc}") from exc


def _problem_data(problem: Problem) -> dict[str, object]:
    return problem.model_dump()
