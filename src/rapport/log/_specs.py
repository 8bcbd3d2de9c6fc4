"""What a run is made of: users, their sessions, conditions, and who memory is about.

These are shared by benchmarks, memories, the runner and the report, so they live at the
bottom of the package (no benchmark imports the runner or the report to get them).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ._tasks import Task

Cell = str | int | float | None
T = TypeVar("T", bound=BaseModel)


class UserRef(BaseModel):
    """Who a memory call is about."""

    id: str
    truth: str = ""
    """The user's true preferences in words. Only the ``oracle`` memory may read this."""


class SessionInfo(BaseModel):
    """What is known at the start of a session."""

    index: int
    benchmark: str
    task: str = ""
    """A short public description of the session's task (domain, API, environment ...)."""
    split: Literal["train", "eval"] = "eval"
    """The session's split (``train`` sessions build memory and are not reported)."""
    horizon: int | None = None
    """The most agent turns the session may take, where the benchmark has such a budget."""
    round: int | None = None
    """For memories that learn in rounds: the session's round (its phase; None: a round of
    its own)."""
    rounds: int | None = None
    """How many learning rounds the run has (None: not in rounds)."""
    round_episodes: int = 0
    """For a train session in rounds: how many train sessions its round has, over every
    user (0: not said)."""


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
    phase: int = 0
    """Sessions run phase by phase: under every condition, each user's sessions of one phase
    run before any user's session of a later phase (a benchmark whose memory is shared by
    its users learns in rounds this way; one phase: each user's sessions run straight)."""
    task: Task
    """What the session is about, typed by benchmark (see `rapport.log.Task`)."""

    def task_as(self, kind: type[T]) -> T:
        """The task, checked to be of the type a benchmark expects.

        Raises:
            TypeError: the session holds another benchmark's task.
        """
        if not isinstance(self.task, kind):
            raise TypeError(
                f"session {self.id} holds a '{self.task.kind}' task, not {kind.__name__}"
            )
        return self.task


class Condition(BaseModel):
    """One arm of a run: a memory method plus any benchmark settings."""

    name: str
    memory: str
    settings: dict[str, Any] = Field(default_factory=dict)


class Table(BaseModel):
    """A titled table a benchmark adds to its report."""

    title: str
    columns: list[str]
    rows: list[list[Cell]]
