"""Exact arithmetic over ``ast`` for the rules of UserRL's FunctionGym tasks (never ``eval``).

A rule such as ``(a + c * b) / d ** 2`` is read from a task file the user supplies, so it is
evaluated only in a small language: numbers, the names it is given, ``+ - * / **`` with a
whole exponent, and unary signs; values are fractions, so ``/`` is exact. A power whose
result would pass `MAX_BITS` bits is refused (the agent picks the inputs: ``9 ** 9 ** 9``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from fractions import Fraction

MAX_CHARS = 500
MAX_BITS = 4_096
"""Largest numerator or denominator a power may make, in bits."""

_OPS = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y,
}


class RuleError(ValueError):
    """The rule is outside the language, or undefined at these inputs (a division by 0)."""


def evaluate_rule(rule: str, names: Mapping[str, float]) -> float:
    """The rule's value at ``names`` (a float of the exact result).

    Raises:
        RuleError: a syntax error, a construct outside the language, or a division by zero.
    """
    if len(rule) > MAX_CHARS:
        raise RuleError(f"rule longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(rule.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise RuleError(f"not a rule: {rule[:80]!r}") from exc
    values = {k: Fraction(v) for k, v in names.items()}
    try:
        return float(_value(tree.body, values))
    except (ZeroDivisionError, OverflowError) as exc:
        raise RuleError(str(exc)) from exc


def _value(node: ast.expr, names: Mapping[str, Fraction]) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise RuleError("not a number: a truth value")
        return Fraction(node.value)
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _value(node.operand, names)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exponent = _value(node.right, names)
        if exponent.denominator != 1:
            raise RuleError("only whole exponents")
        base = _value(node.left, names)
        if base in (0, 1, -1):  # any power of these is small: 1 ** 10 ** 27 is 1
            return Fraction(base ** (int(exponent) % 2 + 2 if base == -1 else int(exponent)))
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(exponent) > MAX_BITS:
            raise RuleError("the power is too large")
        return Fraction(base ** int(exponent))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return Fraction(_OPS[type(node.op)](_value(node.left, names), _value(node.right, names)))
    raise RuleError(f"unsupported in a rule: {ast.dump(node)[:60]}")
