"""MathAPI calls are bounded: huge arguments and slow calls are tool errors the agent sees."""

from __future__ import annotations

import time
from typing import Any

import pytest

from rapport.envs.prefix import _executor
from rapport.envs.prefix._executor import SafeExecutor
from rapport.envs.prefix._tasks import BfclTask

pytest.importorskip("bfcl_eval")


def _math() -> SafeExecutor:
    task = BfclTask(
        id="t", category="base", turns=[], involved_classes=["MathAPI"], ground_truth=[]
    )
    return SafeExecutor(task)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("power", {"base": 10, "exponent": 30_000_000}),
        ("power", {"base": 10, "exponent": 3e7}),
        ("square_root", {"number": 2, "precision": 1_000_000}),
        ("square_root", {"number": 2, "precision": 1e6}),
        ("logarithm", {"value": 10, "base": 2, "precision": 10**6}),
        ("mean", {"numbers": list(range(20_000))}),
        ("add", {"a": 10**5000, "b": 1}),
    ],
)
def test_over_budget_math_calls_are_tool_errors_at_once(
    name: str, arguments: dict[str, Any]
) -> None:
    started = time.perf_counter()
    result = _math().call(name, arguments)
    assert time.perf_counter() - started < 1.0
    assert result.error is not None and result.result.startswith("Error during execution")


def test_ordinary_math_calls_run() -> None:
    result = _math().call("power", {"base": 2, "exponent": 10})
    assert result.error is None and "1024" in result.result
    result = _math().call("square_root", {"number": 2, "precision": 20})
    assert result.error is None and "1.41421356" in result.result


def test_a_slow_call_is_a_tool_error_after_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_executor, "CALL_SECONDS", 0.05)
    monkeypatch.setattr(_executor, "MAX_POWER_BITS", 10**9)
    result = _math().call("power", {"base": 7, "exponent": 3_000_000})
    assert result.error is not None and "took over" in result.error
