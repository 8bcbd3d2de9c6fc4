"""The rewards as TRL reward functions: ``fn(prompts, completions, **columns) -> list[float]``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rapport.llm import Model

from ._data import EnforcedPreference, PreferenceLike
from ._judge import JudgeReward
from ._rewards import PreferenceMatcher, coverage_reward, format_reward

RewardFunc = Callable[..., Any]

REWARD_NAMES = ("coverage", "format", "judge")


def completion_text(completion: Any) -> str:
    """The text of a TRL completion (a string, or a list of chat messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        return str(completion[-1].get("content", ""))
    return ""


def make_format_reward() -> RewardFunc:
    """Reward for the tagged layout."""

    def reflection_format(completions: list[Any], **_: Any) -> list[float]:
        return [format_reward(completion_text(c)) for c in completions]

    return reflection_format


def make_coverage_reward(preferences: dict[str, PreferenceLike]) -> RewardFunc:
    """The deterministic coverage reward (keyword matching against the taxonomy)."""
    matcher = PreferenceMatcher(preferences)

    def reflection_coverage(
        completions: list[Any], enforced_ids: list[list[str]], known_ids: list[list[str]], **_: Any
    ) -> list[float]:
        return [
            coverage_reward(completion_text(c), enforced, known, matcher)
            for c, enforced, known in zip(completions, enforced_ids, known_ids, strict=True)
        ]

    return reflection_coverage


def make_judge_reward(model: Model, preferences: dict[str, PreferenceLike]) -> RewardFunc:
    """The judge-model reward; the judge's calls run concurrently within a batch."""
    judge = JudgeReward(model, preferences)

    async def reflection_judge(
        completions: list[Any],
        enforced_json: list[list[str]],
        prior_notes: list[list[str]],
        **_: Any,
    ) -> list[float | None]:
        jobs = [
            judge.score(
                completion_text(c),
                [EnforcedPreference.model_validate_json(x) for x in enforced],
                prior,
            )
            for c, enforced, prior in zip(completions, enforced_json, prior_notes, strict=True)
        ]
        return list(await asyncio.gather(*jobs))

    return reflection_judge


def make_reward_funcs(
    weights: dict[str, float],
    preferences: dict[str, PreferenceLike],
    judge: Model | None = None,
) -> tuple[list[RewardFunc], list[float]]:
    """The reward functions with a non-zero weight, and their weights.

    Raises:
        ValueError: an unknown reward name, or ``judge`` weighted without a judge model.
    """
    funcs, used = [], []
    for name, weight in weights.items():
        if name not in REWARD_NAMES:
            raise ValueError(f"unknown reward '{name}' (known: {', '.join(REWARD_NAMES)})")
        if weight == 0:
            continue
        if name == "coverage":
            funcs.append(make_coverage_reward(preferences))
        elif name == "format":
            funcs.append(make_format_reward())
        else:
            if judge is None:
                raise ValueError("the judge reward needs grpo.judge_model")
            funcs.append(make_judge_reward(judge, preferences))
        used.append(weight)
    if not funcs:
        raise ValueError("no reward has a non-zero weight")
    return funcs, used
