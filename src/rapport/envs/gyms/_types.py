"""The gyms' record types: an episode's task and outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from rapport.log import BaseOutcome, BaseTask
from rapport.memory.prime import EpisodeSummary


class GymTask(BaseTask):
    """A gym episode: the environment, the split its content comes from, and its seed."""

    kind: Literal["gym"] = "gym"
    env: str
    split: Literal["train", "eval"] = "train"
    episode_seed: int
    task_id: str | None = None
    """The UserRL task the episode plays (``--gym-data``); None: rapport's own content."""
    pool: int | None = None
    """How many UserRL tasks the split it came from holds (train, or test for eval)."""


class GymOutcome(BaseOutcome):
    """A gym episode: its reward, how it went, and what it kept hidden."""

    kind: Literal["gym"] = "gym"
    env: str
    trajectory_reward: float = 0.0
    """The episode's score as reported: UserRL's, the sum of its turn rewards (above 1 in
    IntentionGym and PersuadeGym, whose sums are uncapped)."""
    score: float | None = None
    """The episode's score in [0, 1] (what PRIME's R(tau) reads: the best answer's score,
    the share of details uncovered, the best stance's score); None: ``trajectory_reward``."""
    success: bool = False
    turns_used: int = 0
    horizon: int = 16
    episode_seed: int = 0
    hidden: JsonValue = None
    """The episode's hidden state (the rule, the entity, the intent ...), JSON-able."""
    secrets: list[str] = Field(default_factory=list)
    """Names that give the episode's answer away."""
    rules: str = ""
    """The gym's instructions as the agent saw them."""
    moves: list[str] = Field(default_factory=list)
    """An example message per move the gym takes."""
    talks: bool = True
    """Whether someone answers questions in words in this gym."""
    resampled: int = 0
    """Agent replies asked again because they repeated an earlier move."""
    task_id: str | None = None
    """The UserRL task played (``--gym-data``); None: rapport's own content."""
    pool: int | None = None
    """How many UserRL tasks its split holds."""

    def topic(self) -> str:
        return self.env

    def reward(self) -> float | None:
        return self.trajectory_reward

    def episode_summary(self) -> EpisodeSummary:
        """The episode as PRIME reads it."""
        return EpisodeSummary(
            env=self.env,
            score=self.trajectory_reward if self.score is None else self.score,
            success=self.success,
            horizon=self.horizon,
            hidden=self.hidden if isinstance(self.hidden, dict) else None,
            secrets=self.secrets,
            rules=self.rules,
            talks=self.talks,
            moves=self.moves,
        )
