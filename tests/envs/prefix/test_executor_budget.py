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
        ("square_root", {"number": 2, "precision": 1_000_000}),
        ("square_root", {"number": 2, "precision": 1e6}),
        ("logarithm", {"value": 10, "base": 2, "precision": 10**6}),
        ("mean", {"numbers": list(range(20_000))}),
        ("add", {"a": 10**5000, "b": 1}),
    ],
)
def test_over_budget_math_calls_are_refused_before_they_run(
    name: str, arguments: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(_executor, "_WORKERS", _Recording(ran))
    result = _math().call(name, arguments)
    assert ran == [], "the bounds refuse the call before any work"
    assert result.error is not None and result.result.startswith("Error during execution")
    assert any(word in result.error for word in ("over", "between")), result.error


def test_a_float_power_overflows_at_once_in_the_backend() -> None:
    result = _math().call("power", {"base": 10, "exponent": 3e7})
    assert result.error is not None and "out of range" in result.error


def test_ordinary_math_calls_run() -> None:
    result = _math().call("power", {"base": 2, "exponent": 10})
    assert result.error is None and "1024" in result.result
    result = _math().call("square_root", {"number": 2, "precision": 20})
    assert result.error is None and "1.41421356" in result.result


@pytest.mark.race
def test_a_slow_call_is_a_tool_error_after_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.math_api import MathAPI

    def slow_mean(self: Any, numbers: list[float]) -> dict[str, float]:
        time.sleep(2.0)  # waits without the GIL, as I/O-like slowness does
        return {"result": 0.0}

    monkeypatch.setattr(MathAPI, "mean", slow_mean)
    monkeypatch.setattr(_executor, "CALL_SECONDS", 0.05)
    result = _math().call("mean", {"numbers": [1.0, 2.0]})
    assert result.error is not None and "took over" in result.error


class _Recording:
    """A stand-in worker pool that records what it was asked to run and runs it inline."""

    def __init__(self, ran: list[str]) -> None:
        self.ran = ran

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import concurrent.futures

        self.ran.append(getattr(fn, "__name__", "?"))
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_result(fn(*args, **kwargs))
        return future
