"""A tiny arithmetic evaluator over ``ast`` (never ``eval``): for rules the agent proposes."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping

_BIN: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_CALLS: dict[str, Callable[..., int]] = {"abs": abs, "max": max, "min": min}


class ExprError(ValueError):
    """The expression uses something outside the small arithmetic language."""


def evaluate(expr: str, names: Mapping[str, int]) -> int:
    """Evaluate an integer expression: + - * // % **, comparisons, ``x if c else y``, abs/max/min.

    Raises:
        ExprError: a syntax error or a construct outside the language.
    """
    try:
        tree = ast.parse(expr.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"not an expression: {expr!r}") from exc
    try:
        return int(_eval(tree.body, names))
    except (ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ExprError(str(exc)) from exc


def _eval(node: ast.expr, names: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left, names), _eval(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > 8:
            raise ExprError("exponent too large")
        return _BIN[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, names)
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, names) else node.orelse, names)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
        return int(
            _CMP[type(node.ops[0])](_eval(node.left, names), _eval(node.comparators[0], names))
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS:
        return _CALLS[node.func.id](*(_eval(a, names) for a in node.args))
    raise ExprError(f"unsupported: {ast.dump(node)[:60]}")
