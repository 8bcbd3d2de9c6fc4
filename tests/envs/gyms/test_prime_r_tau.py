"""PRIME's R(tau) on the paper's five worked examples (Fig. 1, 6-9), played on the gyms
where rapport plays that gym, and the credit method each environment gets (App. D)."""

from __future__ import annotations

import json

from rapport.envs.gyms import GymOutcome, UserRLGym, make_userrl_gym
from rapport.llm import Model, ModelRoles, ScriptedAPI
from rapport.memory.prime import (
    PAPER_CREDIT,
    credit_for,
    credit_table,
    key_turns,
    trajectory_reward,
    zone_of,
)


def _user(*replies: dict[str, object]) -> Model:
    return ModelRoles({"all": ScriptedAPI([json.dumps(r) for r in replies])}).get("user")


def _r_tau(gym: UserRLGym, how: str = "score") -> float:
    summary = GymOutcome(
        env=gym.name,
        trajectory_reward=gym.trajectory_reward,
        score=gym.gym_score,
        success=gym.success,
    ).episode_summary()
    return trajectory_reward(gym.rewards, summary.score, how, success=summary.success)  # type: ignore[arg-type]


def _turtle(weights: list[float]) -> UserRLGym:
    task = {
        "id": "snowman",
        "title": "The Snowman's Secret",
        "surface": "I lost my sister, and she was found in spring.",
        "bottom": "She was hidden inside the snowman.",
        "criteria": [{"statement": f"point {i}", "weight": w} for i, w in enumerate(weights)],
    }
    gym = make_userrl_gym("turtle", task, horizon=16, split="train")
    gym.reset(0)
    return gym


async def test_fig6_turtle_solved_is_one_golden() -> None:
    gym = _turtle([0.5, 0.5])
    user = _user({"reply": "yes"}, {"reply": "yes"}, {"reply": "yes"}, {"scores": [1.0, 1.0]})
    for move in ["[action] A snowman?", "[action] Part of it?", "[action] On purpose?"]:
        await gym.astep(move, user)
    await gym.astep("[answer] She was hidden inside the snowman.", user)
    assert _r_tau(gym) == 1.0 and zone_of(_r_tau(gym)) == "golden"


async def test_fig1_a_premature_turtle_answer_is_a_quarter_warning() -> None:
    gym = _turtle([0.5, 0.5])
    await gym.astep("[answer] A coded message.", _user({"scores": [0.5, 0.0]}))
    assert _r_tau(gym) == 0.25 and zone_of(_r_tau(gym)) == "warning"


def test_fig8_function_solved_is_one_golden() -> None:
    task = {"id": "f", "rule": "a + 2*b + 3*c + 4*d", "test_case": [7.0, 3.0, 2.0, 5.0]}
    gym = make_userrl_gym("function", {**task, "expected": 39.0}, horizon=16, split="train")
    gym.reset(0)
    for move in ["[action] 1 0 0 0", "[action] 0 1 0 0", "[action] 0 0 1 0", "[action] 2 1 0 0"]:
        gym.step(move)
    gym.step("[answer] 39")
    assert _r_tau(gym) == 1.0 and zone_of(_r_tau(gym)) == "golden"


async def test_fig9_intention_five_of_six_details_is_083_not_one() -> None:
    details = [{"description": d, "importance": 2, "options": []} for d in "abcdef"]
    task = {"id": "party", "task": "A birthday party.", "category": "Events", "details": details}
    gym = make_userrl_gym("intention", task, horizon=16, split="train")
    gym.reset(0)
    user = _user(
        {"reply": "8.", "covered": [1]},
        {"reply": "15 kids, backyard.", "covered": [1, 2]},
        {"reply": "$300, mermaids.", "covered": [1]},
        {"reply": "Nut allergies.", "covered": [1]},
    )
    for move in [
        "[action] Age?",
        "[action] Guests and place?",
        "[action] Budget?",
        "[action] Diet?",
    ]:
        await gym.astep(move, user)
    await gym.astep("[finish]", user)
    assert round(_r_tau(gym), 2) == 0.83 and zone_of(_r_tau(gym)) == "golden"
    assert _r_tau(gym, "outcome") == 1.0, "counting a success as 1 loses the paper's 0.83"


def test_fig7_travel_076_is_the_score_and_outcome_would_say_one() -> None:
    # rapport's TravelGym scores a booking 0.5 ** rank, so 0.76 is given as the gym's score
    rewards = [0.5, 0.6, 0.7, 0.3, 0.0]
    assert trajectory_reward(rewards, 0.76, "score", success=True) == 0.76
    assert trajectory_reward(rewards, 0.76, "outcome", success=True) == 1.0
    assert zone_of(0.76) == "golden"


def test_credit_follows_the_paper_per_environment_and_can_be_overridden() -> None:
    assert {env: PAPER_CREDIT[env] for env in ("turtle", "function", "intention", "travel")} == {
        "turtle": "R2G",
        "function": "R2G",
        "intention": "Equalized",
        "travel": "Equalized",
    }
    assert credit_for("intention") == "Equalized" and credit_for("telepathy") == "R2G"
    assert credit_for("intention", "R2G") == "R2G", "one method for every environment"
    table = credit_table({"telepathy": "Equalized"})
    assert table["telepathy"] == "Equalized" and table["turtle"] == "R2G"
    # Fig. 9: Equalized picks the first K turns; R2G the ones before the big rewards
    rewards = [0.0, 0.7, 0.0, 0.0, 1.0]
    assert key_turns(rewards, method=credit_for("intention")) == [0, 1, 2]
    assert key_turns(rewards, method=credit_for("function")) != [0, 1, 2]
