"""Every gym: a scripted optimal policy earns the top reward, a random one a low reward."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from rapport.envs.gyms import (
    Action,
    FunctionGym,
    Gym,
    IntentionGym,
    PersuadeGym,
    SearchGym,
    TelepathyGym,
    TravelGym,
    TurtleGym,
    make_gym,
    parse_action,
)

Policy = Callable[[Gym], list[str]]


def _function(g: Gym) -> list[str]:
    h = g.hidden()
    return [
        f"[action] f{tuple(h['test_input'])}",
        f"[answer] rule: {h['rule']}; value: {h['test_value']}",
    ]


def _intention(g: Gym) -> list[str]:
    return [f"[action] {' '.join(d['keys'])}?" for d in g.hidden()["details"]] + ["[finish]"]


def _persuade(g: Gym) -> list[str]:
    from rapport.envs.gyms._persuade import CONCERNS

    return [
        f"[action] Think about the {sorted(CONCERNS[c][0])[0]}." for c in g.hidden()["concerns"]
    ]


OPTIMAL: dict[str, Policy] = {
    "function": _function,
    "telepathy": lambda g: [f"[answer] {g.hidden()['entity']}"],
    "turtle": lambda g: [
        "[answer] " + " ".join(kp["keywords"][0] for kp in g.hidden()["key_points"])
    ],
    "intention": _intention,
    "travel": lambda g: ["[search] hotels", f"[answer] {g.hidden()['best']}"],
    "persuade": _persuade,
    "search": lambda g: [f"[search] {g.hidden()['question']}", f"[answer] {g.hidden()['answer']}"],
}
_NOISE = ["hello", "blue", "seven", "river", "quick", "stone", "maybe", "lamp", "H7", "3", "42"]


def play(gym: Gym, moves: list[str]) -> float:
    for move in moves:
        if gym.done:
            break
        gym.step(move)
    return gym.trajectory_reward


def random_moves(rng: random.Random, n: int = 16) -> list[str]:
    tags = ["[action]", "[answer]", "[search]", "[action]"]
    return [f"{rng.choice(tags)} {' '.join(rng.sample(_NOISE, 2))}" for _ in range(n)]


@pytest.mark.parametrize("name", sorted(OPTIMAL))
def test_optimal_policy_gets_top_reward(name: str) -> None:
    for seed in range(10):
        gym = make_gym(name)
        gym.reset(seed)
        assert play(gym, OPTIMAL[name](gym)) == pytest.approx(1.0), (name, seed, gym.hidden())
        assert gym.done and gym.success


@pytest.mark.parametrize("name", sorted(OPTIMAL))
def test_random_policy_gets_low_reward(name: str) -> None:
    rng = random.Random(name)
    rewards = []
    for seed in range(30):
        gym = make_gym(name)
        gym.reset(seed)
        rewards.append(play(gym, random_moves(rng)))
    assert sum(rewards) / len(rewards) < 0.3


@pytest.mark.parametrize("name", sorted(OPTIMAL))
def test_same_seed_same_episode(name: str) -> None:
    a, b, c = make_gym(name), make_gym(name), make_gym(name)
    assert a.reset(3) == b.reset(3)
    assert a.hidden() == b.hidden()
    firsts = {str(c.reset(s)) + str(c.hidden()) for s in range(8)}
    assert len(firsts) > 1


@pytest.mark.parametrize("name", sorted(OPTIMAL))
def test_train_and_eval_episodes_are_drawn_from_different_pools(name: str) -> None:
    gym_t, gym_e = make_gym(name, split="train"), make_gym(name, split="eval")
    seen_t, seen_e = set(), set()
    for s in range(30):
        gym_t.reset(s)
        gym_e.reset(s)
        seen_t.add(str(gym_t.hidden()))
        seen_e.add(str(gym_e.hidden()))
    if name in {"telepathy", "turtle", "intention", "search"}:  # written content: disjoint
        assert not seen_t & seen_e


def test_horizon_cuts_the_episode() -> None:
    gym = FunctionGym(horizon=4)
    gym.reset(0)
    steps = [gym.step("[action] f(1, 2, 3, 4)") for _ in range(4)]
    assert [s.done for s in steps] == [False, False, False, True]
    assert steps[-1].info["truncated"] and gym.trajectory_reward == 0.0


def test_parse_action_takes_the_last_tag_after_reasoning() -> None:
    action = parse_action("Thought: ask about size.\n[action] Is it big?")
    assert (action.kind, action.text) == ("action", "Is it big?")
    assert parse_action("no tag here").kind == "invalid"
    assert parse_action("[FINISH]").kind == "finish"
    inline = parse_action("Let me query it: `[action] f(1, 2, 3, 4)`")
    assert (inline.kind, inline.text) == ("action", "f(1, 2, 3, 4)")


def test_function_rule_is_checked_on_probe_inputs_not_just_the_value() -> None:
    gym = FunctionGym()
    gym.reset(1)
    value = gym.hidden()["test_value"]
    gym.step(f"[answer] rule: a; value: {value}")
    assert gym.trajectory_reward == 0.5


def test_telepathy_answers_from_attributes_and_a_right_guess_scores_one() -> None:
    gym = TelepathyGym()
    gym.reset(0)
    attrs = gym.hidden()["attributes"]
    assert gym.step(f"[action] Is it {attrs[0]}?").observation == "yes"
    assert gym.step("[action] Does it have feelings about jazz?").observation == "unsure"
    step = gym.step(f"[answer] {gym.hidden()['entity']}")
    assert step.done and step.reward == 1.0 and gym.trajectory_reward == 1.0


def test_telepathy_discounted_guess_score_counts_questions() -> None:
    gym = TelepathyGym(guess_score="discounted")
    gym.reset(0)
    gym.step("[action] Does it have feelings about jazz?")
    gym.step("[action] Does it like opera?")
    gym.step(f"[answer] {gym.hidden()['entity']}")
    assert gym.trajectory_reward == pytest.approx(1 - 0.5 * 2 / 16)
    assert "Fewer questions score higher" in gym.prompt()
    assert "Fewer questions" not in TelepathyGym().prompt()


def test_intention_penalizes_redundant_questions() -> None:
    gym = IntentionGym()
    gym.reset(0)
    first = gym.hidden()["details"][0]
    keys = " ".join(first["keys"])
    gym.step(f"[action] {keys}?")
    before = gym.trajectory_reward
    gym.step("[action] zzz qqq?")
    assert gym.trajectory_reward == pytest.approx(max(0.0, before - 0.05))


def test_travel_score_halves_per_rank() -> None:
    gym = TravelGym()
    gym.reset(2)
    second = gym.ranking[1].id
    gym.step(f"[answer] {second}")
    assert gym.trajectory_reward == 0.5


def test_persuade_reward_sums_to_the_stance_shift() -> None:
    gym = PersuadeGym()
    gym.reset(5)
    moves = _persuade(gym)
    play(gym, moves[:1])
    assert (
        sum(gym.rewards)
        == pytest.approx(gym.trajectory_reward)
        == pytest.approx(1 / (5 - gym.initial))
    )


def test_search_returns_the_linking_passage() -> None:
    gym = SearchGym()
    gym.reset(0)
    company = gym.hidden()["question"].split(" of ")[-1].split(" born")[0].rstrip("?")
    obs = gym.step(f"[search] {company}").observation
    assert company.split()[0] in obs


def test_turtle_answer_scores_share_of_key_points() -> None:
    gym = TurtleGym()
    for seed in range(20):
        gym.reset(seed)
        if len(gym.hidden()["key_points"]) >= 2:
            break
    kp = gym.hidden()["key_points"]
    gym.step(f"[answer] {kp[0]['keywords'][0]}")
    assert gym.trajectory_reward == pytest.approx(1 / len(kp))


def test_answers_are_rewarded_by_their_gain_until_one_solves_the_episode() -> None:
    # UserRL's rule: a partial answer leaves the episode open; each answer earns its gain
    function = FunctionGym()
    function.reset(1)
    value = function.hidden()["test_value"]
    rule = function.hidden()["rule"]
    steps = [
        function.step("[action] f(1, 0, 0, 0)"),
        function.step(f"[answer] rule: a; value: {value}"),
        function.step(f"[answer] rule: a; value: {value + 1}"),
        function.step(f"[answer] rule: {rule}; value: {value}"),
    ]
    assert [s.reward for s in steps] == [0.0, 0.5, 0.0, 0.5]
    assert [s.done for s in steps] == [False, False, False, True]
    assert function.trajectory_reward == sum(function.rewards) == 1.0 and function.success
    turtle = TurtleGym()
    turtle.reset(next(s for s in range(20) if len(_points(turtle, s)) >= 2))
    kp = turtle.hidden()["key_points"]
    first = turtle.step(f"[answer] {kp[0]['keywords'][0]}")
    assert not first.done and "covers 1 of the story's" in first.observation
    every = " ".join(str(p["keywords"][0]) for p in kp)
    last = turtle.step(f"[answer] {every}")
    assert last.done and last.reward == pytest.approx(1 - 1 / len(kp))
    assert sum(turtle.rewards) == pytest.approx(turtle.trajectory_reward) == 1.0


def test_the_once_rule_ends_the_episode_at_the_first_answer() -> None:
    gym = FunctionGym(answers="once")
    gym.reset(1)
    step = gym.step(f"[answer] rule: a; value: {gym.hidden()['test_value']}")
    assert step.done and step.reward == gym.trajectory_reward == 0.5
    turtle = TurtleGym(answers="once")
    turtle.reset(0)
    assert turtle.step("[answer] nothing to do with it").done


def _points(gym: TurtleGym, seed: int) -> list[dict[str, object]]:
    gym.reset(seed)
    return list(gym.hidden()["key_points"])


def test_the_first_move_at_a_line_start_wins_over_imagined_later_moves() -> None:
    message = (
        "[search] try simple functions first\n\n[answer] rule: a + b; value: 10\n"
        "User: wrong\n[finish]"
    )
    assert parse_action(message) == Action("search", "try simple functions first")
    answer = parse_action("**[answer]** penguin\nUser: yes!\n[finish]")
    assert answer == Action("answer", "penguin\nUser: yes!")


def test_the_prompt_names_only_the_moves_a_gym_takes() -> None:
    gym = make_gym("telepathy")
    gym.reset(0)
    prompt = gym.prompt()
    assert "`[action] ...` or `[answer] ...`" in prompt and "[search]" not in prompt
    step = gym.step("[search] What am I thinking of?")
    assert step.observation.startswith("There is no [search] move here.")
    assert "`[action] ...` or `[answer] ...`" in step.observation and not step.done


def test_a_repeated_query_is_pointed_out() -> None:
    gym = make_gym("function")
    gym.reset(0)
    first = gym.step("[action] f(1, 2, 3, 4)")
    again = gym.step("[action]  f(1, 2, 3, 4) ")
    other = gym.step("[action] f(0, 0, 0, 0)")
    assert "exact move before" not in first.observation + other.observation
    assert again.observation.startswith(first.observation)
    assert "(You made this exact move before" in again.observation


def test_a_repeated_wrong_answer_is_pointed_out_and_counts_as_a_repeat() -> None:
    gym = make_gym("telepathy")
    gym.reset(0)
    wrong = "rubber duck" if gym.hidden()["entity"] != "rubber duck" else "canoe"
    first = gym.step(f"[answer] {wrong}")
    assert not first.done and "exact answer before" not in first.observation
    assert gym.repeats(f"[answer]  {wrong.upper()}") and not gym.repeats("[answer] lighthouse")
    again = gym.step(f"[answer] {wrong}")
    assert "(You gave this exact answer before; try a different one.)" in again.observation
