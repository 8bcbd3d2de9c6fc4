"""TauGym: replaying a task's gold actions scores 1.0 under tau2's evaluator."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("tau2")

from rapport.envs.gyms import TauGym


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_gold_replay_scores_one(domain: str) -> None:
    gym = TauGym(domain=domain, horizon=64)
    first = gym.reset(0)
    assert "Customer:" in first
    criteria = gym.task.evaluation_criteria
    for action in criteria.actions or []:
        step = gym.step(
            "[action] " + json.dumps({"name": action.name, "arguments": action.arguments})
        )
        assert not step.info["error"], step.observation
    gym.step("[answer] " + (" ".join(criteria.communicate_info or []) or "All done."))
    final = gym.step("[finish]")
    assert final.done and gym.trajectory_reward == 1.0


def test_doing_nothing_scores_zero_on_a_task_that_needs_a_change() -> None:
    gym = TauGym(domain="retail", horizon=8)
    for seed in range(10):
        gym.reset(seed)
        writes = [
            a
            for a in gym.task.evaluation_criteria.actions or []
            if not a.name.startswith(("get_", "find_", "list_", "calculate"))
        ]
        if writes:
            break
    gym.step("[answer] I cannot help with that.")
    gym.step("[finish]")
    assert gym.trajectory_reward == 0.0


def test_bad_tool_call_json_is_reported_not_raised() -> None:
    gym = TauGym(domain="airline")
    gym.reset(1)
    assert "JSON" in gym.step("[action] get_user_details please").observation


def test_the_customer_speaks_of_themselves_in_the_first_person() -> None:
    from rapport.envs.gyms._tau import first_person

    scenario = (
        "You are Mia Li. You want to change your flight. Your user id is mia_3668. "
        "You were told that you can cancel, and you would like a refund."
    )
    assert first_person(scenario) == (
        "I am Mia Li. I want to change my flight. My user id is mia_3668. "
        "I was told that I can cancel, and I would like a refund."
    )
