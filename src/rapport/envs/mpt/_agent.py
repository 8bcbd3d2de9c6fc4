"""The tool-calling agent: query + target schema + what memory returns -> one validated call."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from ._schema import ApiSchema, describe


@lru_cache(maxsize=1)
def _template() -> str:
    path = resources.files("rapport.envs.mpt") / "prompts" / "agent.md"
    return path.read_text(encoding="utf-8")


def render_instructions(schema: ApiSchema) -> str:
    """The agent's task instructions for one target API."""
    return _template().format(schema=describe(schema))
