"""Credit assignment, stage and zone: the code half of distillation."""

from __future__ import annotations

from typing import Literal

Stage = Literal["exploration", "verification", "completion"]
Zone = Literal["golden", "warning", "preference"]
Credit = Literal["reward_to_go", "equalized"]

GAMMA = 0.8
TOP_K = 3


def reward_to_go(rewards: list[float], gamma: float = GAMMA) -> list[float]:
    """G_t = r_t + gamma * G_{t+1}: each turn's discounted share of what followed."""
    out, running = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def equalized(rewards: list[float], trajectory_reward: float) -> list[float]:
    """Every turn gets an equal share of the trajectory reward."""
    n = len(rewards)
    return [trajectory_reward / n] * n if n else []


def key_turns(
    rewards: list[float],
    *,
    trajectory_reward: float = 0.0,
    method: Credit = "reward_to_go",
    k: int = TOP_K,
    gamma: float = GAMMA,
) -> list[int]:
    """The top-k turns by credit magnitude, in turn order.

    Reward-to-go ranks by |G_t| (ties: the later turn, nearer the outcome). Equalized
    credit cannot rank turns, so it spreads the k picks evenly over the trajectory; so does
    reward-to-go when every turn has the same credit (a run with no turn rewards at all), so
    that such a trajectory still yields lessons from each stage rather than only the last turns.
    """
    n = len(rewards)
    if n == 0:
        return []
    credit = reward_to_go(rewards, gamma)
    if method == "equalized" or max(map(abs, credit)) - min(map(abs, credit)) < 1e-12:
        return _spread(n, k)
    ranked = sorted(range(n), key=lambda t: (abs(credit[t]), t), reverse=True)
    return sorted(ranked[:k])


def _spread(n: int, k: int) -> list[int]:
    """k turns evenly spaced from the first to the last."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if k > 1 else [n - 1]


def stage_of(turn: int, horizon: int) -> Stage:
    """First 25% of the horizon: exploration; last 25%: completion; between: verification."""
    position = turn / horizon
    if position < 0.25:
        return "exploration"
    if position >= 0.75:
        return "completion"
    return "verification"


def zone_of(trajectory_reward: float) -> Zone:
    """>= 0.7 golden (do this), <= 0.3 warning (avoid this), between: preference."""
    if trajectory_reward >= 0.7:
        return "golden"
    if trajectory_reward <= 0.3:
        return "warning"
    return "preference"
