"""What a small model writes still counts: lenient moves, examples, last-turn reminders."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from rapport.cli import main
from rapport.envs import Condition, SessionSpec, UserSpec
from rapport.envs.gyms import (
    GYMS,
    FunctionGym,
    GymBenchmark,
    GymOptions,
    GymTask,
    TelepathyGym,
    make_gym,
    parse_action,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import ExperimentConfig, RewardEvent, SessionRecord
from rapport.memory import create_memory


@pytest.mark.parametrize(
    ("message", "kind", "text"),
    [
        ("[Answer]: penguin", "answer", "penguin"),
        ("**[answer]** penguin", "answer", "penguin"),
        ("Thinking it over.\n**Answer:** penguin", "answer", "penguin"),
        ("Final answer: penguin", "answer", "penguin"),
        ("[guess] penguin", "answer", "penguin"),
        ("[ask] Is it big?", "action", "Is it big?"),
        ("Question: Is it big?", "action", "Is it big?"),
        ("[action] Is it alive?\nUser: yes\nAgent: then it is", "action", "Is it alive?"),
    ],
)
def test_moves_small_models_write_are_read(message: str, kind: str, text: str) -> None:
    action = parse_action(message)
    assert (action.kind, action.text) == (kind, text)


def test_prose_without_a_move_stays_invalid() -> None:
    assert parse_action("Let me think about the answer to this.").kind == "invalid"


@pytest.mark.parametrize("name", [g for g in GYMS if g != "tau"])
def test_every_gym_prompt_shows_an_example_of_each_of_its_moves(name: str) -> None:
    gym = make_gym(name)
    gym.reset(0)
    prompt = gym.prompt()
    assert gym.examples and gym.final_move in gym.examples
    for kind, example in gym.examples.items():
        assert example in prompt and parse_action(example).kind == kind


def test_untagged_function_query_and_unlabelled_answer_score() -> None:
    gym = FunctionGym()
    gym.reset(3)
    step = gym.step("Let me try the simplest input: f(1, 2, 3, 4)")
    assert step.observation.startswith(f"f(1, 2, 3, 4) = {gym.f((1, 2, 3, 4))}")
    rule, args = gym.rule, gym.test_input
    call = f"f({', '.join(map(str, args))})"
    final = gym.step(f"[answer] f(a, b, c, d) = {rule}; {call} = {gym.f(args)}")
    assert final.done and gym.trajectory_reward == 1.0


def test_function_rule_written_with_a_caret_for_power_is_read() -> None:
    gym = FunctionGym()
    for seed in range(50):
        gym.reset(seed)
        if gym.family == "polynomial":
            break
    x = gym.rule.split("*")[0]
    caret = gym.rule.replace(f"{x}*{x}", f"{x}^2", 1)
    gym.step(f"[answer] rule: {caret}; value: {gym.f(gym.test_input)}")
    assert gym.trajectory_reward == 1.0


def test_telepathy_answers_named_things_by_code_and_reads_sentence_guesses() -> None:
    gym = TelepathyGym()
    gym.reset(5)
    target = gym.target.name
    other = "spider" if target != "spider" else "canary"
    assert gym.step(f"[action] Is it a {other}?").observation.startswith("no")
    assert gym.step("Is it a living thing?").observation.splitlines()[0] in {"yes", "no"}
    final = gym.step(f"[answer] I think it is a {target}.")
    assert final.done and gym.trajectory_reward == 1.0


def test_the_last_turns_remind_the_agent_to_answer() -> None:
    gym = TelepathyGym(horizon=3)
    gym.reset(0)
    assert "turns left" not in gym.step("[action] Is it alive?").observation[:3]
    second = gym.step("[action] Is it big?").observation
    assert "last turn" in second and gym.examples["answer"] in second
    assert "last turn" not in gym.step(f"[answer] {gym.target.name}").observation


def _target_of(task: GymTask) -> str:
    gym = make_gym("telepathy", horizon=3, split=task.split)
    gym.reset(task.episode_seed)
    return str(gym.hidden()["entity"])


async def _play_without_memory(
    bench: GymBenchmark, spec: SessionSpec, user: UserSpec, models: ModelRoles
) -> SessionRecord:
    """One episode with the ``none`` memory."""
    return await play_session(
        bench,
        spec,
        user,
        models=models,
        memory=create_memory("none", models),
        condition=Condition(name="none", memory="none"),
    )


async def test_a_scripted_small_model_that_answers_on_the_reminder_scores() -> None:
    bench = GymBenchmark(
        GymOptions(env=["telepathy"], train_episodes=0, eval_episodes=1, horizon=3)
    )
    user = bench.users(1, seed=0)[0]
    spec = bench.sessions(user, 0, seed=0)[0]
    target = _target_of(spec.task_as(GymTask))

    def small_model(request: Request) -> str:
        last = request.messages[-1].content
        return f"**Answer:** {target}" if "last turn" in last else "Is it an animal?"

    models = ModelRoles({"all": ScriptedAPI(responder=small_model)})
    record = await _play_without_memory(bench, spec, user, models)
    assert "Unrecognized" not in " ".join(t.text for t in record.turns)
    assert bench.score(record)["reward"] == 1.0


def test_unknown_gym_options_are_refused() -> None:
    config = ExperimentConfig(benchmark="gym", options={"bogus": "1"})
    with pytest.raises(ValidationError, match="bogus"):
        GymBenchmark.from_config(config)


def test_cli_refuses_an_unknown_gym_option_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    argv = ["run", "gym", "--bogus", "1", "--model", "all=scripted/echo", "--run-dir", str(run_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "bogus" in err and len(err.splitlines()) == 1
    assert not run_dir.exists()


def test_gym_options_take_policy_chars_as_a_string() -> None:
    config = ExperimentConfig(benchmark="gym", options={"env": "tau", "policy_chars": "400"})
    assert GymBenchmark.from_config(config).options.policy_chars == 400


async def test_the_agent_sees_its_earlier_turns_as_the_moves_the_gym_took() -> None:
    bench = GymBenchmark(GymOptions(env=["function"], train_episodes=0, eval_episodes=1, horizon=2))
    user = bench.users(1, seed=0)[0]
    spec = bench.sessions(user, 0, seed=0)[0]
    rambling = "[action] f(1, 2, 3, 4)\nUser: f(1, 2, 3, 4) = 7\n[answer] rule: a; value: 7"
    api = ScriptedAPI([rambling, "[answer] rule: a; value: 0"])
    models = ModelRoles({"all": api})
    record = await _play_without_memory(bench, spec, user, models)
    assert record.turns[1].text == rambling, "the record keeps what the model wrote"
    seen = [m.content for m in api.requests[1].messages if m.role == "assistant"]
    assert seen == ["[action] f(1, 2, 3, 4)"]
    moves = [e.move for e in record.events_of(RewardEvent)]
    assert moves == ["[action] f(1, 2, 3, 4)", "[answer] rule: a; value: 0"]


def test_a_function_query_with_a_guessed_value_after_it_is_still_a_query() -> None:
    gym = FunctionGym()
    gym.reset(2)
    step = gym.step("[action] f(1, 2, 3, 4) = 5")
    assert step.observation.startswith(f"f(1, 2, 3, 4) = {gym.f((1, 2, 3, 4))}")
    assert gym.step("[action] 0 0 1 0").observation.startswith("f(0, 0, 1, 0) = ")
    assert gym.step("[action] f(1, 2) = 3").observation.startswith("Query with four integers")


def test_one_query_written_two_ways_is_one_move() -> None:
    gym = FunctionGym()
    gym.reset(2)
    assert gym.move_text("[action] f(1, 2, 3, 4) = 5") == "[action] f(1, 2, 3, 4)"
    assert gym.move_text("[action] Let me try 1, 2, 3 and 4") == "[action] f(1, 2, 3, 4)"
    assert gym.move_text("[action] f(1, 2)") == "[action] f(1, 2)", "unreadable: as written"
    assert not gym.repeats("[action] f(1, 2, 3, 4) = 5")
    gym.step("[action] f(1, 2, 3, 4) = 5")
    assert gym.repeats("[action] f(1,2,3,4) = 10") and gym.repeats("f(1, 2, 3, 4)")
    again = gym.step("[action] f(1, 2, 3, 4) = 10")
    assert "(You made this exact move before" in again.observation


def test_an_answer_is_taken_as_its_rule_and_value() -> None:
    gym = FunctionGym()
    gym.reset(2)
    x = gym.test_input
    rambling = f"[answer] rule: {gym.rule}; value: {gym.f(x)} Now we query f(1, 2, 3, 4):"
    assert gym.move_text(rambling) == f"[answer] rule: {gym.rule}; value: {gym.f(x)}"
    stated = f"[answer] f(a, b, c, d) = {gym.rule}\nSo f{x} = {gym.f(x)}."
    assert gym.move_text(stated) == f"[answer] rule: {gym.rule}; value: {gym.f(x)}"
    assert gym.move_text("[answer] I do not know") == "[answer] I do not know"
    assert gym.step(rambling).info == {"rule_ok": True, "value_ok": True, "turn": 0}
