"""Rules a model writes are evaluated under a budget: size, nodes, depth, numbers, time."""

from __future__ import annotations

import asyncio
import time

import pytest

from rapport.envs.gyms import _expr
from rapport.envs.gyms._expr import ExprError, evaluate
from rapport.envs.gyms._function import FunctionGym

NAMES = {"a": 12, "b": -3, "c": 5, "d": 0}


def _nested_power(levels: int) -> str:
    return "(" * levels + "a" + ")**8" * levels


@pytest.mark.parametrize(
    ("expr", "refused"),
    [
        (_nested_power(14), "intermediate number over"),  # 71 characters: held a run for minutes
        ("+".join(["a"] * 1000), "nested over"),  # used to crash with RecursionError
        ("(" * 5000 + "a" + ")" * 5000, "longer than"),
        ("a" * 3000, "longer than"),
        ("a**8**8**8", "exponent too large"),
        ("max(" + ",".join(["a"] * 2000) + ")", "longer than"),
    ],
)
def test_hostile_rules_are_refused_by_a_named_bound(expr: str, refused: str) -> None:
    with pytest.raises(ExprError, match=refused):
        evaluate(expr, NAMES)


def test_a_large_but_bounded_rule_still_evaluates() -> None:
    expr = "(a*a*a*a*a*a*a*a)**8 * (a*a*a*a*a*a*a*a)**8 * (a*a*a*a*a*a*a*a)**8"
    assert evaluate(expr, NAMES) == 12 ** (8 * 8 * 3)


def test_ordinary_rules_still_evaluate() -> None:
    assert evaluate("a*a + 3*b - 2", NAMES) == 144 - 9 - 2
    assert evaluate("(a*b + c) % 7", NAMES) == (12 * -3 + 5) % 7
    assert evaluate("a + b if a > c else b - c", NAMES) == 9
    assert evaluate("a**8", NAMES) == 12**8
    assert evaluate("max(a, b, abs(b))", NAMES) == 12


def test_the_time_budget_stops_an_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExprError, match="over"):
        evaluate("a + b + c", NAMES, deadline=time.monotonic() - 1)
    monkeypatch.setattr(_expr, "MAX_SECONDS", -1.0)
    with pytest.raises(ExprError, match="over"):
        evaluate("a", NAMES)


@pytest.mark.race
async def test_function_gym_scores_a_hostile_answer_wrong_off_the_loop_thread() -> None:
    gym = FunctionGym(horizon=4)
    gym.reset(0)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    step = await gym.astep(f"[answer] rule: {_nested_power(14)}; value: 1")
    task.cancel()
    assert not step.done and gym.score == 0.0 and ticks > 0, "wrong: the episode goes on"
