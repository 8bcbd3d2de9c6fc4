"""The gym benchmark under the runner's contract: users, sessions, episodes, scores, tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from rapport.envs import Condition, create_benchmark
from rapport.envs.gyms import GymBenchmark, GymOptions, GymOutcome, make_gym, report_tables
from rapport.eval import play_session
from rapport.llm import ModelCall, ModelRoles, Request, ScriptedAPI
from rapport.log import ExperimentConfig, RecallEvent, RewardEvent, SessionRecord
from rapport.memory import create_memory


def test_options_arrive_as_strings_from_the_cli() -> None:
    config = ExperimentConfig(
        benchmark="gym",
        options={
            "env": "function,telepathy",
            "train_episodes": "2",
            "eval_episodes": "3",
            "horizon": "8",
        },
    )
    bench = create_benchmark(config)
    assert isinstance(bench, GymBenchmark)
    assert bench.options == GymOptions(
        env=["function", "telepathy"], train_episodes=2, eval_episodes=3, horizon=8
    )
    with pytest.raises(ValidationError, match="unknown gym"):
        GymOptions.model_validate({"env": "function,chess"})


def test_users_are_env_streams_and_sessions_are_train_then_frozen_eval() -> None:
    bench = GymBenchmark(GymOptions(env=["function", "search"], train_episodes=2, eval_episodes=2))
    users = bench.users(2, seed=0)
    assert [u.id for u in users] == ["function-0", "function-1", "search-0", "search-1"]
    specs = bench.sessions(users[0], 99, seed=0)
    assert [(s.split, s.learn) for s in specs] == [("train", True)] * 2 + [("eval", False)] * 2
    assert specs == bench.sessions(users[0], 99, seed=0)
    assert len({s.id for s in specs}) == 4
    assert bench.sessions(users[1], 99, seed=0)[0].id != specs[0].id


def test_train_episodes_come_in_rounds_and_eval_episodes_after_them() -> None:
    bench = GymBenchmark(GymOptions(env=["function"], train_episodes=10, eval_episodes=2))
    users = bench.users(3, seed=0)
    specs = bench.sessions(users[0], 0, seed=0)
    assert [s.phase for s in specs] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    models = ModelRoles({"all": ScriptedAPI(["unused"])})
    none = Condition(name="none", memory="none")
    info = bench.episode(specs[2], users[0], models, none).info
    assert (info.round, info.rounds, info.round_episodes, info.split) == (1, 5, 6, "train")
    last = bench.episode(specs[-1], users[0], models, none).info
    assert (last.round_episodes, last.split, last.horizon) == (0, "eval", 16)
    few = GymBenchmark(GymOptions(env=["function"], train_episodes=3, eval_episodes=1, rounds=5))
    assert [s.phase for s in few.sessions(few.users(1, 0)[0], 0, 0)] == [0, 1, 2, 3]


def test_easy_episodes_give_a_hint_and_keep_train_and_eval_apart() -> None:
    bench = GymBenchmark(GymOptions(difficulty="easy"))
    assert bench.options.turns == 8 and GymOptions(difficulty="easy", horizon=5).turns == 5
    function = make_gym("function", difficulty="easy")
    opening = function.reset(1)
    x = function.rule.split("*")[1].split()[0]
    assert f"Hint: f(a, b, c, d) = m*{x} + k" in opening
    assert all(0 <= v <= 5 for v in function.test_input)
    telepathy = make_gym("telepathy", difficulty="easy", split="eval")
    opening = telepathy.reset(3)
    assert len(telepathy.choices) == 4 and telepathy.target.name in telepathy.choices
    assert all(name in opening for name in telepathy.choices)
    train = make_gym("telepathy", difficulty="easy")
    train_names, eval_targets = set(), set()
    for seed in range(40):
        train.reset(seed)
        train_names.update(train.choices)
        telepathy.reset(seed)
        eval_targets.add(telepathy.target.name)
    assert not train_names & eval_targets, "eval entities never appear in train episodes"
    turtle = make_gym("turtle", difficulty="easy")
    opening = turtle.reset(2)
    points = turtle.puzzle["key_points"]
    assert f"covers {len(points)} point" in opening
    assert all(kp["point"] in opening for kp in points[:-1]) and points[-1]["point"] not in opening
    intention = make_gym("intention", difficulty="easy")
    opening = intention.reset(4)
    assert all(d["importance"] != "low" for d in intention.task["details"])
    assert "Hint: ask one question about each of:" in opening
    with pytest.raises(ValueError, match="no difficulty 'easy'"):
        make_gym("travel", difficulty="easy")


def _agent(request: Request) -> str:
    text = request.messages[0].content
    if "hidden function" in text:
        return "[answer] rule: a; value: 0"
    return "[action] Is it an animal?"


async def _telepathy_episode(
    responder: Callable[[Request], str], **options: Any
) -> tuple[GymBenchmark, SessionRecord]:
    """One 3-turn telepathy eval episode with the ``none`` memory."""
    bench = GymBenchmark(
        GymOptions(env=["telepathy"], train_episodes=0, eval_episodes=1, horizon=3, **options)
    )
    models = ModelRoles({"all": ScriptedAPI(responder=responder)})
    user = bench.users(1, 0)[0]
    record = await play_session(
        bench,
        bench.sessions(user, 1, 0)[0],
        user,
        models=models,
        memory=create_memory("none", models),
        condition=Condition(name="none", memory="none"),
    )
    return bench, record


async def test_an_episode_records_turns_rewards_and_scores() -> None:
    bench, record = await _telepathy_episode(_agent, repeat_retries=2)
    assert [t.speaker for t in record.turns] == ["user"] + ["agent", "user"] * 3
    assert [e.turn for e in record.events_of(RewardEvent)] == [1, 3, 5]
    assert bench.score(record) == {"reward": 0.0, "success": 0.0}
    assert record.outcome.env == "telepathy" and record.outcome.hidden["entity"]
    assert record.outcome.secrets == [record.outcome.hidden["entity"]]
    gym = make_gym("telepathy")
    assert (record.outcome.rules, record.outcome.talks) == (gym.instructions, True)
    assert record.outcome.moves == list(gym.examples.values())
    # the same question every time: turns 2 and 3 are each asked twice more, then taken
    assert record.outcome.resampled == 4
    assert len(record.usage) == 1 + 3 + 3 and all(c.role == "agent" for c in record.usage)


async def test_a_repeated_move_is_sampled_again_with_its_own_seed() -> None:
    def agent(request: Request) -> str:
        if request.config.temperature == 0:
            return "[action] Is it an animal?"  # greedy decoding loops on one question
        return f"[action] Is it bigger than a {request.config.seed % 1000}-kilo box?"

    async def play(retries: int) -> SessionRecord:
        return (await _telepathy_episode(agent, repeat_retries=retries))[1]

    record = await play(2)
    moves = [e.move for e in record.events_of(RewardEvent)]
    assert moves[0] == "[action] Is it an animal?"
    assert len(set(moves)) == 3, "each repeat was replaced by a fresh sample"
    assert record.outcome.resampled == 2 and len(record.usage) == 5
    assert [e.move for e in (await play(2)).events_of(RewardEvent)] == moves, "seeded"
    off = await play(0)
    assert {e.move for e in off.events_of(RewardEvent)} == {"[action] Is it an animal?"}
    assert off.outcome.resampled == 0 and len(off.usage) == 3


def _rec(cond: str, env: str, reward: float, split: str = "eval", calls: int = 0) -> SessionRecord:
    return SessionRecord(
        condition=cond,
        user_id=f"{env}-0",
        index=0,
        spec_id="s",
        split=split,
        scores={"reward": reward},
        outcome=GymOutcome(env=env),
        usage=[ModelCall(role="memory", model="m", prompt_tokens=10, completion_tokens=5)] * calls,
    )


def test_report_tables_show_percent_over_the_raw_model_and_library_cost() -> None:
    records = [
        _rec("none", "function", 0.2),
        _rec("prime", "function", 0.3),
        _rec("none", "search", 0.5),
        _rec("prime", "search", 0.25),
        _rec("prime", "search", 1.0, split="train", calls=4),
    ]
    records[1].outcome = records[1].outcome.model_copy(
        update={"success": True, "turns_used": 4, "resampled": 3}
    )
    records[1].events.append(RecallEvent(turn=1, text="Warnings (avoid this): ..."))
    rewards, paired, behaviour, cost = report_tables(records)
    assert behaviour.rows == [
        ["function", "none", 1, "0%", "0.0", "0.0", "0.0"],
        ["function", "prime", 1, "100%", "4.0", "3.0", "1.0"],
        ["search", "none", 1, "0%", "0.0", "0.0", "0.0"],
        ["search", "prime", 1, "0%", "0.0", "0.0", "0.0"],
    ]
    assert rewards.columns == ["env", "none", "prime"]
    assert rewards.rows == [
        ["function", "0.200 [0.200, 0.200]", "0.300 [0.300, 0.300] (+50%)"],
        ["search", "0.500 [0.500, 0.500]", "0.250 [0.250, 0.250] (-50%)"],
    ]
    assert paired.rows == [
        ["function", "prime", 1, "+0.100 [+0.100, +0.100]", "1/0/0"],
        ["search", "prime", 1, "-0.250 [-0.250, -0.250]", "0/0/1"],
    ]
    assert cost.rows == [["prime", 4, 4, 60]]


def test_the_reward_interval_and_the_paired_difference_come_from_the_episodes() -> None:
    records = []
    for i, (base, method) in enumerate([(0.0, 0.5), (0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]):
        for cond, reward in (("none", base), ("prime", method)):
            record = _rec(cond, "telepathy", reward)
            records.append(record.model_copy(update={"spec_id": f"telepathy:eval:{i}"}))
    rewards, paired, _, _ = report_tables(records)
    mean, interval = rewards.rows[0][2].split(" [")
    low, high = (float(x) for x in interval.split("]")[0].split(", "))
    assert mean == "0.500" and 0.0 <= low < 0.5 < high <= 1.0
    [row] = paired.rows
    assert row[:3] == ["telepathy", "prime", 4] and row[4] == "2/1/1"
    assert row[3].startswith("+0.125 [")
