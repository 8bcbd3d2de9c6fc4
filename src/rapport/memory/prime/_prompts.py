"""Prompt templates (package data), rendered at call time."""

from __future__ import annotations

import functools
from importlib import resources
from string import Template
from typing import Any


@functools.cache
def _template(name: str) -> Template:
    path = resources.files("rapport.memory.prime").joinpath("prompts", f"{name}.md")
    return Template(path.read_text("utf-8"))


def render(name: str, **values: Any) -> str:
    """The ``prompts/<name>.md`` template with ``$placeholders`` filled."""
    return _template(name).safe_substitute({k: str(v) for k, v in values.items()})
