"""A tiny arithmetic evaluator over ``ast`` (never ``eval``): for rules the agent proposes.

A rule comes from a model, so evaluating it is bounded: its length (`MAX_CHARS`), its
syntax tree (`MAX_NODES` nodes, `MAX_DEPTH` levels), the size of every intermediate number
(`MAX_BITS`, checked before a ``*`` or ``**`` is computed) and its time (`MAX_SECONDS`).
Anything over budget is an `ExprError`, like any other rule that cannot be evaluated.
"""

from __future__ import annotations

import ast
import operator
import time
from collections.abc import Callable, Mapping

MAX_CHARS = 2_000
MAX_NODES = 1_000
MAX_DEPTH = 100
MAX_BITS = 4_096
"""Largest intermediate number, in bits (about 1,200 decimal digits)."""
MAX_SECONDS = 0.5

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


def evaluate(expr: str, names: Mapping[str, int], *, deadline: float | None = None) -> int:
    """Evaluate an integer expression: + - * // % **, comparisons, ``x if c else y``, abs/max/min.

    Args:
        expr: the expression.
        names: the variables' values.
        deadline: a `time.monotonic` time to stop by (default: `MAX_SECONDS` from now);
            share one across the evaluations of one answer.

    Raises:
        ExprError: a syntax error, a construct outside the language, or over budget.
    """
    if len(expr) > MAX_CHARS:
        raise ExprError(f"expression longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(expr.strip().replace("^", "**"), mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        raise ExprError(f"not an expression: {expr[:80]!r}") from exc
    _check_shape(tree.body)
    try:
        return int(_Evaluator(names, deadline).value(tree.body))
    except (ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ExprError(str(exc)) from exc


def _check_shape(root: ast.expr) -> None:
    """Refuse a tree over `MAX_NODES` nodes or `MAX_DEPTH` levels (iteratively)."""
    nodes = 0
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ExprError(f"expression over {MAX_NODES} nodes")
        if depth > MAX_DEPTH:
            raise ExprError(f"expression nested over {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Evaluator:
    def __init__(self, names: Mapping[str, int], deadline: float | None) -> None:
        self.names = names
        self.deadline = deadline if deadline is not None else time.monotonic() + MAX_SECONDS

    def value(self, node: ast.expr) -> int:
        if time.monotonic() > self.deadline:
            raise ExprError(f"evaluation over {MAX_SECONDS} s")
        return _bounded(self._eval(node))

    def _eval(self, node: ast.expr) -> int:
        names = self.names
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Pow):
                if abs(right) > 8:
                    raise ExprError("exponent too large")
                _fits(_bits(left) * max(int(right), 0))
            elif isinstance(node.op, ast.Mult):
                _fits(_bits(left) + _bits(right))
            return _BIN[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.value(node.operand)
        if isinstance(node, ast.IfExp):
            return self.value(node.body if self.value(node.test) else node.orelse)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            return int(
                _CMP[type(node.ops[0])](self.value(node.left), self.value(node.comparators[0]))
            )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _CALLS
            and not node.keywords
        ):
            return _CALLS[node.func.id](*(self.value(a) for a in node.args))
        raise ExprError(f"unsupported: {ast.dump(node)[:60]}")


def _bits(value: int | float) -> int:
    """Bits of an integer; a float (from a negative power) counts as its largest."""
    return abs(value).bit_length() if isinstance(value, int) else 1_024


def _fits(bits: int) -> None:
    if bits > MAX_BITS:
        raise ExprError(f"intermediate number over {MAX_BITS} bits")


def _bounded(value: int) -> int:
    if isinstance(value, int) and abs(value).bit_length() > MAX_BITS:
        raise ExprError(f"intermediate number over {MAX_BITS} bits")
    return value
