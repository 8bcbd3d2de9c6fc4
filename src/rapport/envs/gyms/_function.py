"""FunctionGym: find a hidden f(a, b, c, d) by querying it, then state the rule and a value."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

from rapport.llm import Model

from ._core import Action, Gym, Step
from ._expr import MAX_SECONDS, ExprError, evaluate

_VARS = ("a", "b", "c", "d")


def _linear(rng: random.Random) -> str:
    k = [rng.randint(-4, 5) for _ in range(4)]
    terms = [f"{c}*{v}" for c, v in zip(k, _VARS, strict=True) if c]
    return " + ".join(terms or ["a"]) + f" + {rng.randint(0, 9)}"


def _polynomial(rng: random.Random) -> str:
    x, y = rng.sample(_VARS, 2)
    return f"{x}*{x} + {rng.randint(1, 4)}*{y} - {rng.randint(0, 6)}"


def _piecewise(rng: random.Random) -> str:
    x, y, z = rng.sample(_VARS, 3)
    return f"{x} + {y} if {x} > {z} else {y} - {z}"


def _modular(rng: random.Random) -> str:
    x, y, z = rng.sample(_VARS, 3)
    return f"({x}*{y} + {z}) % {rng.choice([5, 7, 9, 11])}"


def _product(rng: random.Random) -> str:
    x, y = rng.sample(_VARS, 2)
    return f"{x}*{y} + {rng.randint(1, 9)}"


def _one_input(rng: random.Random) -> str:
    return f"{rng.randint(1, 3)}*{rng.choice(_VARS)} + {rng.randint(0, 9)}"


FAMILIES: dict[str, Callable[[random.Random], str]] = {
    "linear": _linear,
    "polynomial": _polynomial,
    "piecewise": _piecewise,
    "modular": _modular,
    "product": _product,
}
_NUM = re.compile(r"-?\d+")
_CALL = r"f\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\)"
_QUERY = re.compile(_CALL + r"(?!\s*=)")
_RULE = re.compile(
    r"(?:rule\s*:|f\s*\(\s*a\s*,\s*b\s*,\s*c\s*,\s*d\s*\)\s*=)\s*(.+?)\s*(?:;|\n|,?\s*value\s*:|$)",
    re.IGNORECASE,
)


class FunctionGym(Gym):
    """Hidden f(a, b, c, d) from seeded families; exact scoring of the rule and a test value.

    An answer scores 0.5 if the stated rule agrees with f on 30 seeded probe inputs, plus
    0.5 if the test value is exact. Under the ``retry`` answer rule a wrong answer earns
    its gain over the best so far and the episode goes on until both are right.
    """

    name: ClassVar[str] = "function"
    instructions: ClassVar[str] = (
        "A hidden function f(a, b, c, d) maps four integers to an integer. Query it with "
        "`[action] f(1, 2, 3, 4)`. When you know it, reply `[answer] rule: <expression in a, b, "
        "c, d>; value: <f at the test input>`. Expressions may use + - * // % **, "
        "comparisons and `x if cond else y`."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] f(1, 0, 0, 0)",
        "answer": "[answer] rule: 2*a + b - 3; value: 5",
    }
    talks: ClassVar[bool] = False
    difficulties: ClassVar[tuple[str, ...]] = ("normal", "easy")

    def _start(self) -> str:
        if self.difficulty == "easy":
            return self._start_easy()
        self.family = self.rng.choice(sorted(FAMILIES))
        self.rule = FAMILIES[self.family](self.rng)
        self.test_input = tuple(self.rng.randint(-9, 9) for _ in range(4))
        return f"Find f. Then give the rule and f{self.test_input}. You have {self.horizon} turns."

    def _start_easy(self) -> str:
        """``m*x + k`` with the input ``x`` named in the opening and m in 1-3, k in 0-9: two
        queries find it; the test input is small and non-negative."""
        self.family = "one_input"
        self.rule = _one_input(self.rng)
        self.test_input = tuple(self.rng.randint(0, 5) for _ in range(4))
        x = self.rule.split("*")[1].split()[0]
        return (
            f"Find f. Hint: f(a, b, c, d) = m*{x} + k for small whole numbers m and k; the "
            f"other inputs do not matter. Then give the rule and f{self.test_input}. "
            f"You have {self.horizon} turns."
        )

    def f(self, args: tuple[int, ...]) -> int:
        """The hidden function."""
        return evaluate(self.rule, dict(zip(_VARS, args, strict=True)))

    def hidden(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "rule": self.rule,
            "test_input": self.test_input,
            "test_value": self.f(self.test_input),
        }

    def secrets(self) -> list[str]:
        return [self.rule, f"f{self.test_input}"]

    async def astep(self, message: str, model: Model | None = None) -> Step:
        """`step` off the event loop's thread: a rule from a model is evaluated under a
        budget (see `rapport.envs.gyms._expr`), and the loop stays free meanwhile."""
        return await asyncio.to_thread(self.step, message)

    def _act(self, text: str) -> Step:
        """A query: the first ``f(w, x, y, z)`` in the text (a value a model wrote after it,
        as in ``f(1, 2, 3, 4) = 5``, is ignored), else exactly four integers."""
        nums = _query_args(text)
        if nums is None:
            return Step("Query with four integers (|x| <= 1000), e.g. [action] f(1, 2, 3, 4).")
        return Step(f"{_call(nums)} = {self.f(nums)}")

    def _canonical(self, action: Action) -> Action:
        """A readable query as ``f(w, x, y, z)`` and an answer as ``rule: ...; value: N``:
        what the model wrote around them is ignored (and scored the same)."""
        if action.kind == "action":
            nums = _query_args(action.text)
            return Action("action", _call(nums)) if nums else action
        if action.kind != "answer":
            return action
        rule = _RULE.search(action.text)
        value = self._stated_value(action.text)
        parts = [f"rule: {rule.group(1).strip()}"] if rule else []
        parts += [f"value: {value}"] if value is not None else []
        return Action("answer", "; ".join(parts)) if parts else action

    def _answer(self, text: str) -> Step:
        rule_ok, value_ok = self._rule_matches(text), self._value_matches(text)
        verdict = (
            f"rule {'correct' if rule_ok else 'wrong'}, value {'correct' if value_ok else 'wrong'}"
        )
        info = {"rule_ok": rule_ok, "value_ok": value_ok}
        return self._graded(0.5 * rule_ok + 0.5 * value_ok, f"Scored: {verdict}.", info)

    def _coerce(self, message: str) -> Action | None:
        """An untagged message: a stated rule is an answer; else its first f(...) without a
        value after it is a query."""
        if _RULE.search(message) and re.search(r"value\s*:", message, re.IGNORECASE):
            return Action("answer", message.strip())
        query = _QUERY.search(message)
        return Action("action", query.group(0)) if query else None

    def _rule_matches(self, text: str) -> bool:
        match = _RULE.search(text)
        if not match:
            return False
        expr = match.group(1).strip().strip("`.").replace("^", "**").strip()
        probe = random.Random(f"probe:{self.rule}")
        deadline = time.monotonic() + MAX_SECONDS  # one budget for all 30 probes
        try:
            for _ in range(30):
                args = tuple(probe.randint(-12, 12) for _ in range(4))
                names = dict(zip(_VARS, args, strict=True))
                if evaluate(expr, names, deadline=deadline) != self.f(args):
                    return False
        except ExprError:
            return False
        return True

    def _value_matches(self, text: str) -> bool:
        """``value: N``, or ``f(<the test input>) = N``."""
        value = self._stated_value(text)
        return value is not None and value == self.f(self.test_input)

    def _stated_value(self, text: str) -> int | None:
        """The test value an answer states: ``value: N``, or ``f(<the test input>) = N``."""
        match = re.search(r"value\s*:\s*(-?\d+)", text, re.IGNORECASE)
        if match:
            return int(match.group(1))
        for call in re.finditer(_CALL + r"\s*=\s*(-?\d+)", text):
            if tuple(int(call.group(i)) for i in range(1, 5)) == self.test_input:
                return int(call.group(5))
        return None


def _call(args: tuple[int, ...]) -> str:
    """``f(1, 2, 3, 4)``."""
    return f"f({', '.join(map(str, args))})"


def _query_args(text: str) -> tuple[int, ...] | None:
    """The four integers a query names (its first ``f(...)`` call, else all integers in
    it), or None when it does not name exactly four of at most 1000 in size."""
    call = re.search(_CALL, text)
    nums = tuple(int(n) for n in (call.groups() if call else _NUM.findall(text)))
    return nums if len(nums) == 4 and all(abs(n) <= 1000 for n in nums) else None
