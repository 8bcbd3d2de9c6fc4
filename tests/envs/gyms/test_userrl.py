"""UserRL's published tasks (``--gym-data``): reading a checkout, and UserRL's scoring rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rapport.envs.gyms import (
    GymBenchmark,
    GymDataError,
    GymOptions,
    GymTask,
    load_userrl,
    make_userrl_gym,
    userrl_summary,
)
from rapport.envs.gyms._rational import RuleError, evaluate_rule
from rapport.llm import Model, ModelRoles, ScriptedAPI


def _user(*replies: dict[str, object]) -> tuple[ScriptedAPI, Model]:
    api = ScriptedAPI([json.dumps(r) for r in replies])
    return api, ModelRoles({"all": api}).get("user")


def test_the_checkout_loads_each_gym_from_its_split_and_task_files(userrl_checkout: Path) -> None:
    loaded = load_userrl(userrl_checkout, ["function", "telepathy", "turtle", "intention"])
    function = loaded["function"]
    assert [t["id"] for t in function.train] == ["fn-1", "fn-2"]
    assert [t["id"] for t in function.test] == ["fn-3"] and function.skipped == 1
    assert function.test[0] == {
        "id": "fn-3",
        "rule": "a - b * c / d",
        "test_case": [9.0, 2.0, 3.0, 6.0],
        "expected": 8.0,
    }
    assert loaded["telepathy"].test[0]["opening"] == "I am thinking of a musical instrument."
    assert loaded["turtle"].train[0]["criteria"][0]["weight"] == 0.6
    assert [d["importance"] for d in loaded["intention"].train[0]["details"]] == [3, 2, 1]


def test_the_summary_says_per_gym_what_is_loaded_and_what_is_not(userrl_checkout: Path) -> None:
    rows = {row["gym"]: row for row in userrl_summary(userrl_checkout)}
    assert list(rows) == [
        "function", "telepathy", "turtle", "intention", "persuade", "search", "travel", "tau"
    ]  # fmt: skip
    assert rows["function"]["loaded"] == {"train": 2, "test": 1}
    assert rows["function"]["note"] == "1 split rows without a task"
    assert rows["persuade"]["loaded"] == {"train": 1, "test": 1}
    assert rows["search"]["rows"] == {"train": None, "test": 2} and rows["search"]["loaded"] is None
    assert "web search" in rows["search"]["note"]
    assert rows["travel"]["loaded"] is None and "not played" in rows["travel"]["note"]


@pytest.mark.parametrize(
    ("breakage", "envs", "words"),
    [
        ("missing", ["function"], "no such file or directory"),
        ("empty", ["function"], "not a UserRL checkout"),
        ("no-turtle", ["turtle"], "gyms/TurtleGym is missing"),
        ("bad-json", ["function"], "functions.json is not JSON"),
        ("bad-parquet", ["telepathy"], "data/telepathy_multiturn/test.parquet is not a UserRL"),
        ("no-test-split", ["intention"], "data/intention_multiturn/test.parquet is missing"),
        ("bad-task", ["function"], "a malformed UserRL function task"),
        ("fine", ["search"], "gym 'search' cannot play UserRL's tasks"),
    ],
)
def test_a_bad_checkout_is_one_clear_error(
    userrl_checkout: Path, tmp_path: Path, breakage: str, envs: list[str], words: str
) -> None:
    root = userrl_checkout
    data = root / "gyms" / "FunctionGym" / "functiongym" / "data" / "functions.json"
    if breakage == "missing":
        root = tmp_path / "nowhere"
    elif breakage == "empty":
        root = tmp_path / "empty"
        root.mkdir()
    elif breakage == "no-turtle":
        shutil.rmtree(root / "gyms" / "TurtleGym")
    elif breakage == "bad-json":
        data.write_text("[{", encoding="utf-8")
    elif breakage == "bad-parquet":
        (root / "data" / "telepathy_multiturn" / "test.parquet").write_bytes(b"PAR1 not really")
    elif breakage == "no-test-split":
        (root / "data" / "intention_multiturn" / "test.parquet").unlink()
    elif breakage == "bad-task":
        data.write_text(json.dumps([{"id": "fn-1", "rule": "a", "test_case": [1]}]))
    with pytest.raises(GymDataError, match=words.replace("(", r"\(")) as caught:
        load_userrl(root, envs)
    assert "\n" not in str(caught.value)


def test_rules_are_evaluated_exactly_and_only_as_arithmetic() -> None:
    names = {"a": 1.0, "b": 3.0, "c": 2.0, "d": 2.0}
    assert evaluate_rule("(a + b) / c + d ** 2", names) == 6.0
    assert evaluate_rule("a / 3 * 3", {"a": 1.0}) == 1.0  # exact: no 0.999...
    assert evaluate_rule("c ** d ** b ** a", {"a": 1.0, "b": 2.0, "c": 2.0, "d": 3.0}) == 2.0**9
    assert evaluate_rule("a ** b ** c", {"a": 1.0, "b": 10.0, "c": 30.0}) == 1.0
    for bad in ["__import__('os')", "a.real", "b ** b ** b ** b", "a ** 0.5", "[a]", "True + a"]:
        with pytest.raises(RuleError):
            evaluate_rule(bad, names)
    with pytest.raises(RuleError):
        evaluate_rule("a / (b - 3)", names)


def test_function_queries_the_rule_and_a_right_answer_scores_one() -> None:
    gym = make_userrl_gym(
        "function",
        {"id": "f", "rule": "a * b + c - d", "test_case": [2.0, 3.0, 4.0, 1.0], "expected": 9.0},
        horizon=16,
        split="train",
    )
    gym.reset(0)
    assert gym.step("[action] 1 2 3 4").observation.startswith("f(1, 2, 3, 4) = 1")
    assert "test input" in gym.step("[action] 2 3 4 1").observation
    assert gym.step("[search] test").observation == "Test input: 2, 3, 4, 1"
    wrong = gym.step("[answer] 8")
    assert wrong.reward == 0.0 and not wrong.done, "a wrong answer lets the episode go on"
    right = gym.step("[answer] 9")
    assert right.reward == 1.0 and right.done and gym.trajectory_reward == 1.0
    assert gym.secrets() == ["a * b + c - d", "f(2, 3, 4, 1)"]


async def test_telepathy_the_judge_decides_every_guess_and_the_user_every_question() -> None:
    task = {"id": "Violin", "title": "Violin", "category": "instrument", "opening": ""}
    task["target"] = "Violin - a four-string instrument played with a bow"
    api, user = _user({"reply": "no"}, {"correct": False}, {"reply": "yes"}, {"correct": True})
    gym = make_userrl_gym("telepathy", task, horizon=16, split="eval")
    gym.reset(0)
    asked = await gym.astep("[action] Is it made of metal?", user)
    assert asked.observation == "no"
    assert "Violin - a four-string" in api.requests[0].messages[0].content
    named = await gym.astep("[answer] It is not the Violin", user)
    assert not named.done and named.reward == 0.0, "naming the title is not enough: the judge"
    untagged = await gym.astep("Is it played with a bow?", user)
    assert untagged.observation == "yes" and api.requests[2].messages[-1].content.startswith("Is")
    right = await gym.astep("[answer] the fiddle", user)
    assert right.done and right.reward == 1.0 and gym.trajectory_reward == 1.0
    assert len(api.requests) == 4


async def test_telepathy_lenient_reading_decides_a_named_title_by_code() -> None:
    task = {"id": "V", "title": "Violin", "category": "", "opening": "", "target": "Violin"}
    api, user = _user()
    gym = make_userrl_gym("telepathy", task, horizon=16, split="eval", moves="lenient")
    gym.reset(0)
    question = await gym.astep("[answer] Is it made of wood?", user)
    assert not question.done, "a question is not a guess (decided by code)"
    by_code = await gym.astep("Answer: I think it is the violin.", user)
    assert by_code.done and gym.trajectory_reward == 1.0 and not api.requests


async def test_telepathy_discounted_guess_score_is_an_option() -> None:
    task = {"id": "V", "title": "Violin", "category": "", "opening": "", "target": "Violin"}
    gym = make_userrl_gym("telepathy", task, horizon=4, split="eval", guess_score="discounted")
    gym.reset(0)
    _, user = _user({"reply": "yes"}, {"correct": True})
    await gym.astep("[action] Does it make music?", user)
    await gym.astep("[answer] Violin", user)
    assert gym.trajectory_reward == pytest.approx(1 - 0.5 * 1 / 4)


async def test_turtle_grades_each_criterion_and_rewards_the_gain() -> None:
    task = {
        "id": "t",
        "title": "T",
        "surface": "A bell rang in an empty tower.",
        "bottom": "The flood rang it.",
        "criteria": [
            {"statement": "water rang it", "weight": 0.6},
            {"statement": "a flood", "weight": 0.4},
        ],
    }
    api, user = _user({"reply": "yes"}, {"scores": [1.0, 0.4]}, {"scores": [1.0, 1.0]})
    gym = make_userrl_gym("turtle", task, horizon=16, split="train")
    gym.reset(0)
    assert (await gym.astep("[action] Was it the water?", user)).observation == "yes"
    first = await gym.astep("[answer] The river rang it somehow.", user)
    assert first.reward == pytest.approx(0.8) and not first.done  # 0.4 is graded a half
    assert first.observation.startswith(
        "Of the 2 points that count, your story gets 1 right and 1 in part."
    )
    second = await gym.astep("[answer] The flood lifted a float tied to the rope.", user)
    assert second.reward == pytest.approx(0.2) and second.done, "a sum of 1.0 ends it"
    assert "1. water rang it" in api.requests[1].messages[0].content
    assert gym.trajectory_reward == pytest.approx(1.0) and gym.gym_score == pytest.approx(1.0)


async def test_turtle_ends_at_one_as_userrl_sums_the_weights() -> None:
    weights = [0.7, 0.2, 0.1]  # 0.7 + 0.2 + 0.1 == 0.9999999999999999 in floats
    task = {
        "id": "t",
        "title": "T",
        "surface": "s",
        "bottom": "b",
        "criteria": [{"statement": f"point {w}", "weight": w} for w in weights],
    }
    _, user = _user({"scores": [1.0, 1.0, 1.0]}, {"scores": [0.9, 0.0, 0.0]})
    gym = make_userrl_gym("turtle", task, horizon=16, split="eval")
    gym.reset(0)
    almost = await gym.astep("[answer] All of it.", user)
    assert not almost.done, "UserRL's sum falls short of 1.0 by a float's width"
    assert almost.reward == 0.7 + 0.2 + 0.1
    again = await gym.astep("[answer] Some of it.", user)
    assert again.reward == 0.0 and not again.done, "a weaker answer earns nothing"


async def test_intention_rewards_the_most_important_detail_less_a_cost_per_extra() -> None:
    task = {
        "id": "i",
        "task": "Help me plan a dinner.",
        "category": "Cooking",
        "details": [
            {"description": "guests", "importance": 3, "options": ["2", "4"]},
            {"description": "diet", "importance": 2, "options": []},
            {"description": "budget", "importance": 1, "options": []},
        ],
    }
    _, user = _user(
        {"reply": "Four of us, all vegetarian.", "covered": [1, 2]},
        {"reply": "Nice weather today.", "covered": []},
        {"reply": "Not much.", "covered": [1]},
    )
    gym = make_userrl_gym("intention", task, horizon=16, split="train")
    gym.reset(0)
    both = await gym.astep("[action] How many guests, and any diets?", user)
    assert both.reward == 1.0 - 0.2 and not both.done, "UserRL's float, not divided by a total"
    assert both.observation == "Four of us, all vegetarian."
    assert (await gym.astep("[action] Do you like the sun?", user)).reward == 0.0
    last = await gym.astep("What budget?", user)  # untagged: the user still answers
    assert last.reward == 0.4 and last.done
    assert gym.trajectory_reward == pytest.approx(1.2), "the sum, uncapped"
    assert gym.gym_score == 1.0 and gym.success, "every detail uncovered"


async def test_intention_sums_past_one_and_finish_ends_it_in_any_case() -> None:
    task = {
        "id": "i",
        "task": "Plan a trip.",
        "category": "Travel",
        "details": [{"description": d, "importance": 3, "options": []} for d in "abcdef"],
    }
    replies = [{"reply": "ok", "covered": [1]} for _ in range(5)]
    api, user = _user(*replies)
    gym = make_userrl_gym("intention", task, horizon=16, split="eval")
    gym.reset(0)
    for move in ["[action] a?", "[search] b", "[answer] c", "d?", " [action] e?"]:
        assert (await gym.astep(move, user)).reward == 1.0
    end = await gym.astep("  [FINISH]", user)
    assert end.done and end.reward == 0.0 and len(api.requests) == 5
    assert gym.trajectory_reward == 5.0 and gym.gym_score == pytest.approx(5 / 6)


async def test_persuade_rewards_levels_moved_toward_disagreement() -> None:
    task = {"id": "p", "claim": "Homework is good.", "argument": "It builds habits."}
    _, user = _user(
        {"reply": "Hm.", "stance": "partly agree"},
        {"reply": "Back.", "stance": "agree"},
        {"reply": "You win.", "stance": "strongly disagree"},
    )
    gym = make_userrl_gym("persuade", task, horizon=16, split="train")
    gym.reset(0)
    first = await gym.astep("[action] Studies say otherwise.", user)
    assert first.reward == 0.333333, "UserRL rounds levels / 6 to 6 places"
    assert (await gym.astep("It costs sleep.", user)).reward == 0.0  # untagged: answered
    last = await gym.astep("[search] play matters", user)
    assert last.done and last.reward == 0.833333
    assert gym.trajectory_reward == pytest.approx(0.333333 + 0.833333), "the sum, uncapped"
    assert gym.gym_score == 1.0


def test_sessions_spread_the_split_tasks_over_streams_and_episodes(userrl_checkout: Path) -> None:
    options = GymOptions(
        env=["telepathy"], gym_data=str(userrl_checkout), train_episodes=1, eval_episodes=1
    )
    bench = GymBenchmark(options)
    users = bench.users(2, seed=0)
    tasks = [s.task_as(GymTask) for u in users for s in bench.sessions(u, 0, seed=0)]
    train = [str(t.task_id) for t in tasks if t.split == "train"]
    assert sorted(train) == ["Hedgehog", "Lighthouse"], "two streams, two train tasks"
    assert {t.task_id for t in tasks if t.split == "eval"} == {"Violin"}
    assert {t.pool for t in tasks if t.split == "train"} == {2}


def test_gym_data_refuses_easy_episodes(userrl_checkout: Path) -> None:
    with pytest.raises(ValueError, match="difficulty easy"):
        GymOptions(gym_data=str(userrl_checkout), difficulty="easy")
