"""Credit assignment, the trajectory reward, stage and zone: the code half of distillation."""

from __future__ import annotations

from typing import Literal

Stage = Literal["exploration", "verification", "completion"]
Zone = Literal["golden", "warning", "preference"]
Credit = Literal["R2G", "Equalized"]
"""``R2G``: each turn's discounted reward-to-go; ``Equalized``: every turn the same weight."""
TrajectoryReward = Literal["score", "outcome", "R2G"]
"""What an episode's reward R(tau) is (it sets the zone and counts a poor outcome):
``score``: the gym's score in [0, 1] (the paper's: its worked examples, Fig. 1 and 6-9,
give 1.00, 1.00, 0.76, 0.83 and 0.25); ``outcome``: 1 for a solved episode, else the
gym's score; ``R2G``: the turn rewards discounted from the first turn on (a success at a
late turn counts for little: 0.8**15 at turn 16)."""

GAMMA = 0.8
"""Discount of reward-to-go (App. D, Table 2)."""
TOP_K = 3
"""Key turns per trajectory (Table 2)."""
GOLDEN_AT = 0.7
"""R(tau) at or above which an experience is golden (Table 2)."""
WARNING_AT = 0.3
"""R(tau) at or below which an experience is a warning (Table 2)."""
STAGE_BOUNDS = (0.25, 0.75)
"""Where exploration ends and completion begins, as shares of the horizon (Table 2)."""

PAPER_CREDIT: dict[str, Credit] = {
    "turtle": "R2G",
    "function": "R2G",
    "intention": "Equalized",
    "travel": "Equalized",
    "telepathy": "R2G",
    "persuade": "R2G",
    "search": "R2G",
    "tau": "R2G",
}
"""Credit assignment per environment. App. D names four: R2G where turns depend on the
ones before (TurtleGym, FunctionGym), Equalized where information is gathered in parallel
(IntentionGym, TravelGym). The others follow the same rule: a TelepathyGym question
narrows what the last ones left, a PersuadeGym argument moves a stance the earlier ones
moved, SearchGym and TauGym chain searches and tool calls: R2G."""
DEFAULT_CREDIT: Credit = "R2G"
"""Credit for an environment the table does not name."""


def credit_table(given: Credit | dict[str, Credit] | None = None) -> dict[str, Credit]:
    """The credit method per environment: `PAPER_CREDIT`, with ``given`` over it (one
    method for every environment, or some environments' own)."""
    if given is None:
        return dict(PAPER_CREDIT)
    if isinstance(given, str):
        return dict.fromkeys(PAPER_CREDIT, given)
    return {**PAPER_CREDIT, **given}


def credit_for(env: str, given: Credit | dict[str, Credit] | None = None) -> Credit:
    """The credit method of one environment (see `credit_table`)."""
    if isinstance(given, str):
        return given
    return credit_table(given).get(env, DEFAULT_CREDIT)


def reward_to_go(rewards: list[float], gamma: float = GAMMA) -> list[float]:
    """G_t = r_t + gamma * G_{t+1}: each turn's discounted share of what followed."""
    out, running = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def discounted_return(rewards: list[float], gamma: float = GAMMA) -> float:
    """G_0 = sum_t gamma^t r_t: the trajectory's reward with later turns discounted."""
    return reward_to_go(rewards, gamma)[0] if rewards else 0.0


def trajectory_reward(
    rewards: list[float],
    score: float,
    how: TrajectoryReward = "score",
    gamma: float = GAMMA,
    *,
    success: bool = False,
) -> float:
    """The reward an episode counts for in PRIME (its zone and the poor-outcome count), in
    [0, 1]: by default the gym's ``score``; its outcome (1 when ``success``, else the
    score); or the discounted return of its turn rewards (``R2G``). Reward-to-go credits
    turns (`key_turns`), whatever sets the zone."""
    if how == "R2G":
        value = discounted_return(rewards, gamma)
    elif how == "outcome" and success:
        value = 1.0
    else:
        value = score
    return min(1.0, max(0.0, value))


def equalized(rewards: list[float], trajectory_reward: float) -> list[float]:
    """Every turn gets an equal share of the trajectory reward."""
    n = len(rewards)
    return [trajectory_reward / n] * n if n else []


def key_turns(
    rewards: list[float],
    *,
    trajectory_reward: float = 0.0,
    method: Credit = "R2G",
    k: int = TOP_K,
    gamma: float = GAMMA,
) -> list[int]:
    """The top-k turns by credit magnitude, in turn order.

    ``R2G`` ranks by |G_t| (ties: the later turn, nearer the outcome); when every turn has
    the same credit (a trajectory with no turn reward at all) the k picks are spread evenly
    over it, so that it still yields its first, middle and last moves. ``Equalized`` weighs
    every turn the same, so ties go to the earlier turn: the key turns are the first k.
    """
    n = len(rewards)
    if n == 0:
        return []
    if method == "Equalized":
        return list(range(min(k, n)))
    credit = reward_to_go(rewards, gamma)
    if max(map(abs, credit)) - min(map(abs, credit)) < 1e-12:
        return _spread(n, k)
    ranked = sorted(range(n), key=lambda t: (abs(credit[t]), t), reverse=True)
    return sorted(ranked[:k])


def anchor_turn(
    rewards: list[float], keys: list[int], *, method: Credit = "R2G", gamma: float = GAMMA
) -> int:
    """The key turn that carries the most credit, which sets an experience's stage and
    situation: under ``R2G`` the largest |G_t| (ties: the later turn); under ``Equalized``
    the first key turn.

    Raises:
        ValueError: no key turns.
    """
    if not keys:
        raise ValueError("anchor_turn needs at least one key turn")
    if method == "Equalized":
        return keys[0]
    credit = reward_to_go(rewards, gamma)
    return max(keys, key=lambda t: (abs(credit[t]), t))


def _spread(n: int, k: int) -> list[int]:
    """k turns evenly spaced from the first to the last."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if k > 1 else [n - 1]


def stage_of(turn: int, horizon: int) -> Stage:
    """First 25% of the horizon: exploration; last 25%: completion; between: verification."""
    position = turn / horizon
    if position < STAGE_BOUNDS[0]:
        return "exploration"
    if position >= STAGE_BOUNDS[1]:
        return "completion"
    return "verification"


def zone_of(trajectory_reward: float) -> Zone:
    """>= 0.7 golden (do this), <= 0.3 warning (avoid this), between: preference."""
    if trajectory_reward >= GOLDEN_AT:
        return "golden"
    if trajectory_reward <= WARNING_AT:
        return "warning"
    return "preference"
