"""Credit assignment, stage and zone against hand-computed examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.memory.prime import (
    anchor_turn,
    discounted_return,
    equalized,
    key_turns,
    reward_to_go,
    stage_of,
    trajectory_reward,
    zone_of,
)


def test_reward_to_go_by_hand() -> None:
    # G3 = .5; G2 = .8*.5 = .4; G1 = .8*.4 = .32; G0 = 1 + .8*.32 = 1.256
    assert reward_to_go([1, 0, 0, 0.5]) == pytest.approx([1.256, 0.32, 0.4, 0.5])
    assert reward_to_go([0, 0, 1]) == pytest.approx([0.64, 0.8, 1.0])


def test_key_turns_pick_the_top_three_by_credit_magnitude() -> None:
    # G = [.4096, .512, .64, .8, 1.0]: the last three carry the most credit
    assert key_turns([0, 0, 0, 0, 1]) == [2, 3, 4]
    # G4 = .1, G3 = .08, G2 = .064, G1 = .0512, G0 = -1 + .04096 = -.95904
    assert key_turns([-1, 0, 0, 0, 0.1]) == [0, 3, 4]
    assert key_turns([0.2]) == [0]
    assert key_turns([]) == []


def test_equalized_weighs_every_turn_the_same_so_the_key_turns_are_the_first() -> None:
    assert equalized([0, 0, 0, 1], 0.8) == pytest.approx([0.2] * 4)
    assert key_turns([0.0] * 10, trajectory_reward=1.0, method="Equalized") == [0, 1, 2]
    assert key_turns([0, 0, 0, 0, 1], method="Equalized") == [0, 1, 2]
    assert key_turns([0.0, 1.0], method="Equalized") == [0, 1]
    stages = [stage_of(t, 16) for t in key_turns([0.0] * 16, method="Equalized")]
    assert stages == ["exploration"] * 3


def test_the_anchor_is_the_key_turn_with_the_most_credit() -> None:
    # G = [.4096, .512, .64, .8, 1.0]
    assert anchor_turn([0, 0, 0, 0, 1], [2, 3, 4]) == 4
    assert anchor_turn([-1, 0, 0, 0, 0.1], [0, 3, 4]) == 0
    assert anchor_turn([0.0] * 10, [0, 4, 9]) == 9, "no signal: the last, nearest the outcome"
    assert anchor_turn([0, 0, 1], [0, 1, 2], method="Equalized") == 0


def test_the_r2g_trajectory_reward_is_discounted_like_reward_to_go() -> None:
    # a right answer at the third turn: 0.8^2 * 1
    assert discounted_return([0, 0, 1]) == pytest.approx(0.64)
    assert trajectory_reward([0, 0, 1], score=1.0, how="R2G") == pytest.approx(0.64)
    assert trajectory_reward([0, 0, 1], score=1.0, how="score") == 1.0
    # intention-like: details at turns 1-3, a redundant question costs 0.05, clipped to [0, 1]
    assert trajectory_reward([0.5, 0.3, 0.2], 1.0, how="R2G") == pytest.approx(0.5 + 0.24 + 0.128)
    assert trajectory_reward([-0.05], 0.0, how="R2G") == 0.0
    assert discounted_return([]) == 0.0


def test_the_zone_follows_the_gyms_score_whenever_it_was_earned() -> None:
    # solved with the 16th and last allowed move, scoring 0.8: R(tau) is the score, golden
    late = [0.0] * 15 + [0.8]
    assert trajectory_reward(late, score=0.8, success=True) == 0.8
    assert zone_of(trajectory_reward(late, score=0.8, success=True)) == "golden"
    assert trajectory_reward(late, score=0.5, success=False) == 0.5
    assert zone_of(trajectory_reward([0.0] * 16, score=0.0)) == "warning"
    # discounted from the first turn: 0.8 * 0.8^15, a warning
    assert zone_of(trajectory_reward(late, 0.8, "R2G", success=True)) == "warning"
    # ``outcome`` counts a solved episode as 1
    assert trajectory_reward(late, 0.8, "outcome", success=True) == 1.0
    # credit still goes to the turns by reward-to-go: the last turns are the key ones
    assert key_turns(late) == [13, 14, 15]


def test_reward_to_go_without_any_signal_spreads_like_equalized() -> None:
    # no turn reward at all: every G_t is 0, so no turn outranks another
    assert key_turns([0.0] * 10) == [0, 4, 9]
    assert [stage_of(t, 16) for t in key_turns([0.0] * 16)] == [
        "exploration",
        "verification",
        "completion",
    ]
    assert key_turns([0.0, 0.0]) == [0, 1]


def test_stage_boundaries_at_horizon_16() -> None:
    stages = [stage_of(t, 16) for t in range(16)]
    assert stages[:4] == ["exploration"] * 4
    assert stages[4:12] == ["verification"] * 8
    assert stages[12:] == ["completion"] * 4


def test_zone_thresholds() -> None:
    assert [zone_of(r) for r in (1.0, 0.7, 0.69, 0.5, 0.31, 0.3, 0.0)] == [
        "golden",
        "golden",
        "preference",
        "preference",
        "preference",
        "warning",
        "warning",
    ]


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=16))
def test_key_turns_are_sorted_distinct_and_at_most_three(rewards: list[float]) -> None:
    keys = key_turns(rewards)
    assert keys == sorted(set(keys)) and len(keys) == min(3, len(rewards))
    g = reward_to_go(rewards)
    worst_kept = min(abs(g[k]) for k in keys)
    assert all(abs(g[t]) <= worst_kept + 1e-12 for t in range(len(rewards)) if t not in keys)
