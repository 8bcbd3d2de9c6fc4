"""One MultiSessionCollab session as an episode: the simulated user's side of it."""

from __future__ import annotations

import functools
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rapport.llm import GenerateConfig, Message, ModelOutput, ModelRoles
from rapport.log import Condition, SessionInfo, SessionSpec, Speaker, StopReason

from .._protocol import AgentRequest, Episode, SessionLog
from ._problems import stated_answer
from ._profiles import CollabUser
from ._rule_user import RuleUser
from ._simulator import CollabUserSimulator
from ._types import CollabOutcome, Problem


class SessionSettings(BaseModel):
    """What a condition may change about a session (read from ``Condition.settings``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["multiturn", "direct"] = "multiturn"
    """``direct``: the agent gets the whole problem and answers once, no user simulation."""
    preferences: bool = True
    """False: the simulated user holds no preferences."""


@cache
def agent_prompt(name: str) -> str:
    """A packaged agent prompt (``agent``: the collaborator; ``direct``: one-shot solver)."""
    return resources.files("rapport.envs.collab").joinpath(f"prompts/{name}.md").read_text()


def problem_text(problem: Problem) -> str:
    """The problem as the user sees it: the question, then lettered options if any."""
    return problem.prompt()


class CollabEpisode(Episode):
    """The user brings the problem, reacts to each agent reply, and keeps a draft answer.

    Args:
        spec: the session.
        user: the simulated user's profile.
        problem: the session's problem.
        condition: the condition, whose settings pick the mode.
        models: the run's roles (the ``user`` role plays the user).
        max_turns: the most user-agent turn pairs (the orchestrator ends the session there).
        benchmark: the benchmark's name (for `SessionInfo`).
        agent_config: the agent's sampling settings (None: the model's defaults).
        user_kind: who plays the user: ``llm`` (the user model) or ``rules`` (code).
        enforcement: how the LLM user words enforcements (see `CollabOptions`).
    """

    def __init__(
        self,
        spec: SessionSpec,
        user: CollabUser,
        problem: Problem,
        condition: Condition,
        models: ModelRoles,
        *,
        max_turns: int,
        benchmark: str = "collab",
        agent_config: GenerateConfig | None = None,
        user_kind: Literal["llm", "rules"] = "llm",
        enforcement: Literal["model", "natural", "template"] = "model",
    ) -> None:
        self.problem, self.agent_config = problem, agent_config
        self.turn_cap = max_turns
        self.settings = SessionSettings.model_validate(condition.settings)
        self.info = SessionInfo(
            index=spec.index,
            benchmark=benchmark,
            task="a multiple-choice question" if problem.choices else "a math problem",
        )
        prefs = user.preference_objects() if self.settings.preferences else []
        self.user: CollabUserSimulator | RuleUser
        if user_kind == "rules":
            self.user = RuleUser(
                persona=user.persona,
                problem=problem_text(problem),
                preferences=prefs,
                extract=functools.partial(stated_answer, problem),
                seed=f"{user.id}:{spec.id}:{spec.index}",
            )
        else:
            self.user = CollabUserSimulator(
                models.get("user"),
                persona=user.persona,
                problem=problem_text(problem),
                preferences=prefs,
                extract=functools.partial(stated_answer, problem, loose=True),
                enforce_with=enforcement,
            )
        self.history: list[Message] = []
        self.draft = ""

    async def start(self, log: SessionLog) -> None:
        if self.settings.mode == "direct":
            self._add(log, "user", problem_text(self.problem))
        else:
            self._add(log, "user", await self.user.opening())

    def request(self) -> AgentRequest:
        prompt = agent_prompt("direct" if self.settings.mode == "direct" else "agent")
        return AgentRequest(
            messages=list(self.history), instructions=prompt, config=self.agent_config
        )

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        self._add(log, "agent", output.text)
        if self.settings.mode == "direct":
            self.draft, self.done = output.text.strip(), True
            return
        try:
            reply = await self.user.react(self.history, turn=len(self.history))
        finally:
            self.draft = self.user.draft
        for event in reply.events:
            log.event(event)
        self._add(log, "user", reply.message)
        if reply.stop:
            log.stop(StopReason.USER_ENDED)
            self.done = True

    def _add(self, log: SessionLog, speaker: Speaker, text: str) -> None:
        log.say(speaker, text)
        role: Literal["user", "assistant"] = "user" if speaker == "user" else "assistant"
        self.history.append(Message(role=role, content=text))

    def outcome(self) -> CollabOutcome:
        if self.settings.mode == "multiturn":
            self.draft = self.user.draft
        return CollabOutcome(
            draft=self.draft,
            answer=self.problem.answer,
            problem_id=self.problem.id,
            problem=self.problem,
            mode=self.settings.mode,
        )
