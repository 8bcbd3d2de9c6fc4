"""An exception as one line a person can read: a pydantic error as ``where: what`` parts,
without the library's wording for it."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

PARTS = 4
"""Problems of one validation error that are spelt out (the rest are counted)."""

_PLAIN = {
    "extra_forbidden": "unknown name",
    "missing": "required",
}


def error_line(exc: BaseException | str, *, limit: int = 400, title: bool = False) -> str:
    """`exc` as one line of at most `limit` characters.

    A `pydantic.ValidationError` reads ``users: Input should be greater than 0; options.env:
    unknown name`` (prefixed with the model's name when `title` is set); anything else is
    its message with whitespace runs made one space (its type's name when it has none).
    """
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        parts = [_part(e) for e in errors[:PARTS]]
        more = f" (and {len(errors) - PARTS} more)" if len(errors) > PARTS else ""
        text = ("; ".join(parts) + more) or "invalid"
        text = f"{exc.title}: {text}" if title else text
    else:
        try:
            text = " ".join(str(exc).split()) or type(exc).__name__
        except Exception:  # a __str__ that fails (deep recursion, a broken exception)
            text = type(exc).__name__
    return text[:limit].encode("utf-8", "replace").decode("utf-8")


def _part(error: ErrorDetails) -> str:
    """``options.env: unknown gym 'x'``; a model-level check's message alone."""
    message = _PLAIN.get(error["type"], error["msg"]).removeprefix("Value error, ")
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {message}" if where else message
