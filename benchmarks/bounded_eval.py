"""Wall time of model-written input that used to stall a run, under the evaluation budgets.

FunctionGym answers (nested ``**``, 1,000 chained terms) and BFCL MathAPI calls with huge
arguments (``power(10, 3e7)``, ``square_root(2, precision=1e6)``): each must come back
within its budget, scored as a wrong rule or returned as a tool error. Prints one JSON
object: per case, the seconds it took and what came back.

Run:  python benchmarks/bounded_eval.py
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from rapport.envs.gyms._expr import MAX_SECONDS
from rapport.envs.gyms._function import FunctionGym
from rapport.envs.prefix._executor import CALL_SECONDS, SafeExecutor
from rapport.envs.prefix._tasks import BfclTask


def nested_power(levels: int) -> str:
    """``(((a)**8)**8)...**8``: 14 levels is the 71-character answer that held a run 246 s."""
    return "(" * levels + "a" + ")**8" * levels


GYM_CASES = {
    "nested_power_71_chars": nested_power(14),
    "nested_power_40_levels": nested_power(40),
    "chained_1000_terms": "+".join(["a"] * 1000),
    "chained_5000_terms": "+".join(["a"] * 5000),
    "deep_parens_5000": "(" * 5000 + "a" + ")" * 5000,
}
MATH_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "power(10, 3e7)": ("power", {"base": 10, "exponent": 3e7}),
    "power(10, 30000000)": ("power", {"base": 10, "exponent": 30_000_000}),
    "square_root(2, precision=1e6)": ("square_root", {"number": 2, "precision": 1e6}),
    "square_root(2, precision=1000000)": ("square_root", {"number": 2, "precision": 1_000_000}),
    "logarithm(10, 2, precision=1000000)": (
        "logarithm",
        {"value": 10, "base": 2, "precision": 1_000_000},
    ),
    "power(2, 10) (normal)": ("power", {"base": 2, "exponent": 10}),
}


async def gym_case(expr: str) -> dict[str, Any]:
    gym = FunctionGym(horizon=4)
    gym.reset(0)
    started = time.perf_counter()
    step = await gym.astep(f"[answer] rule: {expr}; value: 1")
    return {
        "seconds": round(time.perf_counter() - started, 4),
        "chars": len(expr),
        "reply": step.observation[:80],
    }


def math_case(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    task = BfclTask(
        id="bench", category="base", turns=[], involved_classes=["MathAPI"], ground_truth=[]
    )
    executor = SafeExecutor(task)
    started = time.perf_counter()
    result = executor.call(name, arguments)
    return {
        "seconds": round(time.perf_counter() - started, 4),
        "error": result.error,
        "result": None if result.error else result.result[:40],
    }


def main() -> None:
    gym = {name: asyncio.run(gym_case(expr)) for name, expr in GYM_CASES.items()}
    math = {name: math_case(*case) for name, case in MATH_CASES.items()}
    budgets = {"expression_seconds": MAX_SECONDS, "math_call_seconds": CALL_SECONDS}
    print(json.dumps({"budgets": budgets, "function_gym": gym, "math_api": math}, indent=2))


if __name__ == "__main__":
    main()
