"""The report's Jinja environment without globals: the bottom of the HTML rendering, which
charts render with and `_html` adds its globals to."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, select_autoescape


def new_environment() -> Environment:
    """A fresh environment of the report's templates (autoescaped), with no globals."""
    return Environment(
        loader=PackageLoader("rapport.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def templates() -> Environment:
    """The environment charts render with (shared, no globals)."""
    return new_environment()
