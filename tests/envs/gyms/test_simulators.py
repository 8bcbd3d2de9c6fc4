"""Where code cannot decide, the gyms ask a model (user simulator / judge) and parse its reply."""

from __future__ import annotations

import json

from rapport.envs.gyms import TelepathyGym, TurtleGym
from rapport.llm import ModelRoles, ScriptedAPI


async def test_telepathy_asks_the_user_model_only_for_uncovered_questions() -> None:
    api = ScriptedAPI(["No."])
    model = ModelRoles({"all": api}).get("user")
    gym = TelepathyGym()
    gym.reset(0)
    covered = await gym.astep("[action] Is it alive?", model)
    uncovered = await gym.astep("[action] Would a poet write about it?", model)
    assert covered.observation in {"yes", "no"} and uncovered.observation == "no"
    assert len(api.requests) == 1 and gym.hidden()["entity"] in api.requests[0].messages[0].content
    assert gym.questions == 2


async def test_turtle_judge_credits_paraphrased_key_points() -> None:
    gym = TurtleGym()
    gym.reset(0)
    n = len(gym.hidden()["key_points"])
    judge = ModelRoles({"all": ScriptedAPI([json.dumps({"covered": list(range(1, n + 1))})])})
    answer = "[answer] something said in entirely other words"
    step = await gym.astep(answer, None)
    assert not step.done and gym.trajectory_reward == 0.0  # no judge: signal words only
    assert "covers 0 of the story's" in step.observation, "the story stays hidden"
    gym.reset(0)
    gym.judge = judge.get("judge")
    step = await gym.astep(answer, None)
    assert step.done and gym.trajectory_reward == 1.0
    assert step.observation.startswith("The story: ")


async def test_turtle_host_reply_is_reduced_to_yes_no_irrelevant() -> None:
    gym = TurtleGym()
    gym.reset(0)
    model = ModelRoles({"all": ScriptedAPI(["Yes, absolutely."])}).get("user")
    assert (await gym.astep("[action] Was the weather important?", model)).observation == "yes"
