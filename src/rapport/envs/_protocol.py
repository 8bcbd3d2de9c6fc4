"""A benchmark produces users and their ordered sessions, runs one session and scores it."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from rapport.agents import Agent
from rapport.llm import ModelRoles
from rapport.log import ExperimentConfig, SessionRecord
from rapport.memory import Memory, UserRef


class UserSpec(BaseModel):
    """A simulated user. Benchmarks may subclass it with their own fields."""

    id: str
    persona: str = ""
    preferences: list[str] = Field(default_factory=list)
    """Preference ids the user holds."""
    attributes: dict[str, Any] = Field(default_factory=dict)

    def ref(self, truth: str = "") -> UserRef:
        """The reference memory methods see (truth only for the oracle)."""
        return UserRef(id=self.id, truth=truth)


class SessionSpec(BaseModel):
    """One session of a user's sequence: the same under every condition of a run."""

    id: str
    """Stable id of the problem / task (shared across conditions)."""
    user_id: str
    index: int
    split: Literal["train", "eval"] = "eval"
    """``train`` sessions build memory and are not reported; ``eval`` sessions are reported."""
    learn: bool = True
    """Whether memory learns from this session (False: the memory is frozen for it)."""
    task: dict[str, Any] = Field(default_factory=dict)


class Condition(BaseModel):
    """One arm of a run: a memory method plus any benchmark settings."""

    name: str
    memory: str
    settings: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Benchmark(Protocol):
    """What the runner needs from a benchmark."""

    name: str

    def users(self, n: int, seed: int) -> list[UserSpec]: ...

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]: ...

    async def run_session(
        self,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        *,
        condition: Condition,
    ) -> SessionRecord: ...

    def score(self, record: SessionRecord) -> dict[str, float]: ...


def default_conditions(config: ExperimentConfig) -> list[Condition]:
    """One condition per memory method, named after it."""
    return [Condition(name=m, memory=m) for m in config.memory]
