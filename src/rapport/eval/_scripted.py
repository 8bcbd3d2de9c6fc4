"""A tiny, model-agnostic benchmark for tests and for timing the harness itself.

Each user has one favourite word. A session is ``max_turns`` user/agent exchanges about a
topic; the session scores whether the agent ever said the user's word (``hit``) and how long
the agent's replies were (``words``). With the ``scripted`` models it costs no model time.
"""

from __future__ import annotations

import asyncio
import random
import time

from pydantic import BaseModel, ConfigDict, Field

from rapport.agents import Agent
from rapport.envs import Condition, SessionSpec, UserSpec
from rapport.llm import Message, ModelRoles
from rapport.log import ExperimentConfig, SessionRecord, Turn
from rapport.memory import Memory, SessionInfo

WORDS = ("tables", "bullets", "brevity", "examples", "formulas", "python", "haiku", "steps")
TOPICS = ("sorting", "graphs", "algebra", "probability", "recursion", "geometry", "parsing")


class ScriptedOptions(BaseModel):
    """Options of the scripted benchmark (CLI values arrive as strings)."""

    model_config = ConfigDict(extra="forbid")

    delay: float = Field(default=0.0, ge=0.0)
    """Seconds to sleep per turn (to make a run slow enough to interrupt)."""
    train_sessions: int = Field(default=0, ge=0)
    """The first N sessions of each user are ``train`` (not reported)."""


class ScriptedBenchmark:
    """A benchmark with no hidden costs: every session is a few scripted exchanges."""

    name = "scripted"
    metrics: tuple[str, ...] = ("hit", "words")
    lower_is_better: frozenset[str] = frozenset({"words"})

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

    def truth(self, user: UserSpec) -> str:
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
                task={"topic": rng.choice(TOPICS)},
            )
            for i in range(n)
        ]

    async def run_session(
        self,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        *,
        condition: Condition,
    ) -> SessionRecord:
        """Alternate user and agent messages for `max_turns` exchanges."""
        ref = user.ref(truth=self.truth(user))
        topic = str(spec.task["topic"])
        info = SessionInfo(index=spec.index, benchmark=self.name, task=topic)
        context = await memory.context(ref, info)
        history: list[Message] = []
        turns: list[Turn] = []
        for t in range(self.max_turns):
            if self.options.delay:
                await asyncio.sleep(self.options.delay)
            ask = await models.get("user").generate(
                [Message(role="user", content=f"Ask about {topic}, question {t + 1}.")]
            )
            history.append(Message(role="user", content=ask.text))
            turns.append(Turn(index=len(turns), speaker="user", text=ask.text))
            reply = await agent.respond(
                history,
                instructions=f"Help with {topic}.",
                memory_context=context,
                recall=await memory.recall(ref, history),
            )
            history.append(Message(role="assistant", content=reply.text))
            turns.append(Turn(index=len(turns), speaker="agent", text=reply.text))
        return SessionRecord(
            condition=condition.name,
            user_id=user.id,
            index=spec.index,
            spec_id=spec.id,
            split=spec.split,
            turns=turns,
            outcome={"word": user.preferences[0]},
            finished_at=time.time(),
        )

    def score(self, record: SessionRecord) -> dict[str, float]:
        """``hit``: 1 if the agent said the user's word; ``words``: mean words per reply."""
        replies = [t.text for t in record.turns if t.speaker == "agent"]
        word = str(record.outcome.get("word", ""))
        hit = float(any(word and word in r.lower() for r in replies))
        words = sum(len(r.split()) for r in replies) / max(len(replies), 1)
        return {"hit": hit, "words": words}
