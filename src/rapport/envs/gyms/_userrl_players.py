"""The gyms that play UserRL's tasks, by name."""

from __future__ import annotations

from typing import Any

from ._core import AnswerRule
from ._telepathy import GuessScore
from ._userrl import Task
from ._userrl_gyms import (
    MoveReading,
    UserRLFunctionGym,
    UserRLGym,
    UserRLTelepathyGym,
    UserRLTurtleGym,
)
from ._userrl_talk import UserRLIntentionGym, UserRLPersuadeGym

USERRL_PLAYERS: dict[str, type[UserRLGym]] = {
    "function": UserRLFunctionGym,
    "telepathy": UserRLTelepathyGym,
    "turtle": UserRLTurtleGym,
    "intention": UserRLIntentionGym,
    "persuade": UserRLPersuadeGym,
}
"""The gyms that play UserRL's tasks, by name."""


def make_userrl_gym(
    env: str,
    task: Task,
    *,
    horizon: int,
    split: str,
    answers: AnswerRule = "retry",
    guess_score: GuessScore = "userrl",
    moves: MoveReading = "userrl",
) -> UserRLGym:
    """The gym that plays a UserRL task of ``env`` (``answers`` for function and turtle,
    ``guess_score`` for telepathy; ``moves`` for all: see `UserRLGym`)."""
    options: dict[str, Any] = {"horizon": horizon, "split": split, "moves": moves}
    if env in {"function", "turtle"}:
        options["answers"] = answers
    if env == "telepathy":
        options["guess_score"] = guess_score
    return USERRL_PLAYERS[env](task, **options)
