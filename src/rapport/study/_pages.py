"""The study's templates (Jinja2, autoescaped; ``markdown`` renders sanitized HTML)."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.responses import HTMLResponse

from rapport.envs.study import (
    CLOSING_LEARNED,
    CLOSING_PREFERRED,
    FREE_TEXT,
    IMPACT_CHOICES,
    IMPACT_QUESTION,
    SCALE,
    SESSIONS,
    SURVEY_ITEMS,
)

from ._render import render_markdown


@cache
def environment() -> Environment:
    """The study's Jinja2 environment (autoescaped; ``markdown`` renders sanitized HTML)."""
    env = Environment(
        loader=PackageLoader("rapport.study", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = lambda text: Markup(render_markdown(text))
    env.globals.update(scale=SCALE, items=SURVEY_ITEMS, sessions=SESSIONS, free_text=FREE_TEXT)
    env.globals.update(impact_question=IMPACT_QUESTION, impact_choices=IMPACT_CHOICES)
    env.globals.update(closing_learned=CLOSING_LEARNED, closing_preferred=CLOSING_PREFERRED)
    return env


def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A rendered page."""
    return HTMLResponse(environment().get_template(name).render(**context), status_code=status)
