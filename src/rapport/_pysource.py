"""String literals read out of a Python source file, which is parsed and never run: how
rapport reads a published checkout's prompts without executing any of its code."""

from __future__ import annotations

import ast
from pathlib import Path


class PySourceError(ValueError):
    """The file cannot be read or is not valid Python."""


def parse(path: Path) -> ast.Module:
    """The file's syntax tree.

    Raises:
        PySourceError: the file cannot be read, is not UTF-8 or is not valid Python.
    """
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PySourceError(f"{path}: cannot read ({exc})") from exc
    try:
        return ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise PySourceError(f"{path}: not valid Python ({exc})") from exc


def string_constants(tree: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments: the literal's value (others: None)."""
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                value = node.value
                found[target.id] = value.value if isinstance(value, ast.Constant) else None
    return found


def fstring_prefixes(tree: ast.Module, function: str, variable: str) -> list[str]:
    """The literal text that opens each f-string in `function` (a function or method
    anywhere in the module) whose first substitution is the name `variable`, in source
    order: for ``f"Use these:\\n{notes}" + x`` with `variable` ``notes``, ``"Use these:\\n"``."""
    prefixes: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name != function:
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.JoinedStr):
                text = _prefix_before(inner, variable)
                if text is not None:
                    prefixes.append(text)
    return prefixes


def _prefix_before(node: ast.JoinedStr, variable: str) -> str | None:
    text = ""
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text += part.value
            continue
        if (
            isinstance(part, ast.FormattedValue)
            and isinstance(part.value, ast.Name)
            and part.value.id == variable
            and part.conversion == -1
            and part.format_spec is None
        ):
            return text
        return None
    return None
