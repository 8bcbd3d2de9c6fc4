"""A tiny, model-agnostic benchmark for tests and for timing the harness itself.

Each user has one favourite word. A session is ``max_turns`` user/agent exchanges about a
topic; the session scores whether the agent ever said the user's word (``hit``) and how long
the agent's replies were (``words``). With the ``scripted`` models it costs no model time.
"""

from __future__ import annotations

import asyncio
import random

from pydantic import BaseModel, ConfigDict, Field

from rapport.llm import Message, ModelOutput, ModelRoles
from rapport.log import (
    Condition,
    ExperimentConfig,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    UserSpec,
)

from .._caps import RoleCap, SessionCaps
from .._protocol import AgentRequest, Benchmark, Episode, SessionLog
from ._types import ScriptedOutcome, ScriptedTask

WORDS = ("tables", "bullets", "brevity", "examples", "formulas", "python", "haiku", "steps")
TOPICS = ("sorting", "graphs", "algebra", "probability", "recursion", "geometry", "parsing")


class ScriptedOptions(BaseModel):
    """Options of the scripted benchmark (CLI values arrive as strings)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    delay: float = Field(default=0.0, ge=0.0)
    """Seconds to sleep per turn (to make a run slow enough to interrupt)."""
    train_sessions: int = Field(default=0, ge=0)
    """The first N sessions of each user are ``train`` (not reported)."""


class ScriptedBenchmark(Benchmark):
    """A benchmark with no hidden costs: every session is a few scripted exchanges."""

    name = "scripted"
    options_model = ScriptedOptions
    metrics = ("hit", "words")
    lower_is_better = frozenset({"words"})
    produces = (ScriptedOutcome,)
    roles = ("user",)

    def __init__(self, *, max_turns: int = 2, options: ScriptedOptions | None = None) -> None:
        self.max_turns = max_turns
        self.options = options or ScriptedOptions()

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> ScriptedBenchmark:
        """Build from a config; `config.options` are validated into `ScriptedOptions`."""
        return cls(max_turns=config.max_turns, options=ScriptedOptions(**config.options))

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """`n` users, each with a favourite word drawn from the seed."""
        rng = random.Random(seed)
        return [
            UserSpec(id=f"u{i}", persona=f"user {i}", preferences=[rng.choice(WORDS)])
            for i in range(n)
        ]

    def truth(self, user: UserSpec, condition: Condition) -> str:
        """The user's true preference in words (for the oracle memory)."""
        return f"Mention {user.preferences[0]}."

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """`n` sessions with topics drawn from the seed and the user."""
        rng = random.Random(f"{seed}:{user.id}")
        return [
            SessionSpec(
                id=f"{user.id}-s{i}",
                user_id=user.id,
                index=i,
                split="train" if i < self.options.train_sessions else "eval",
                task=ScriptedTask(topic=rng.choice(TOPICS)),
            )
            for i in range(n)
        ]

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> ScriptedEpisode:
        """``max_turns`` exchanges about the session's topic."""
        topic = spec.task_as(ScriptedTask).topic
        info = SessionInfo(index=spec.index, benchmark=self.name, task=topic)
        return ScriptedEpisode(info, topic, user.preferences[0], models, self)

    def session_caps(self, spec: SessionSpec) -> SessionCaps:
        """``max_turns`` user questions and as many agent replies, with no token limit."""
        turns = RoleCap(calls=self.max_turns)
        return SessionCaps(roles={"agent": turns, "user": turns}, dataset=spec.task.kind)

    def score(self, record: SessionRecord) -> dict[str, float]:
        """``hit``: 1 if the agent said the user's word; ``words``: mean words per reply."""
        replies = [t.text for t in record.turns if t.speaker == "agent"]
        word = record.outcome.word if isinstance(record.outcome, ScriptedOutcome) else ""
        hit = float(any(word and word in r.lower() for r in replies))
        words = sum(len(r.split()) for r in replies) / max(len(replies), 1)
        return {"hit": hit, "words": words}


class ScriptedEpisode(Episode):
    """The user model asks about the topic; the agent answers; ``max_turns`` times."""

    def __init__(
        self,
        info: SessionInfo,
        topic: str,
        word: str,
        models: ModelRoles,
        benchmark: ScriptedBenchmark,
    ) -> None:
        self.info, self.topic, self.word = info, topic, word
        self.user = models.get("user")
        self.turn_cap, self.delay = benchmark.max_turns, benchmark.options.delay
        self.history: list[Message] = []
        self.asked = 0

    async def start(self, log: SessionLog) -> None:
        await self._ask(log)

    def request(self) -> AgentRequest:
        return AgentRequest(messages=list(self.history), instructions=f"Help with {self.topic}.")

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        self.history.append(Message(role="assistant", content=output.text))
        log.say("agent", output.text)
        if not self.at_cap:
            await self._ask(log)

    async def _ask(self, log: SessionLog) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)
        self.asked += 1
        prompt = f"Ask about {self.topic}, question {self.asked}."
        ask = await self.user.generate([Message(role="user", content=prompt)])
        self.history.append(Message(role="user", content=ask.text))
        log.say("user", ask.text)

    def outcome(self) -> ScriptedOutcome:
        return ScriptedOutcome(word=self.word)
