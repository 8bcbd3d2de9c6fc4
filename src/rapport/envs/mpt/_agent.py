"""The tool-calling agent: query + target schema + what memory returns -> one validated call."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from rapport.agents import Agent
from rapport.llm import GenerateConfig, Message

from ._schema import ApiSchema, arguments_model, describe


@lru_cache(maxsize=1)
def _template() -> str:
    path = resources.files("rapport.envs.mpt") / "prompts" / "agent.md"
    return path.read_text(encoding="utf-8")


def render_instructions(schema: ApiSchema) -> str:
    """The agent's task instructions for one target API."""
    return _template().format(schema=describe(schema))


async def call_api(
    agent: Agent,
    schema: ApiSchema,
    dialogue: list[Message],
    *,
    memory_context: str = "",
    recall: str = "",
) -> dict[str, Any]:
    """The arguments the agent chooses for a call of ``schema`` (``None`` values dropped).

    The output is decoded under the schema's argument model (enums for value sets), so a
    parsed reply is schema-valid by construction; the caller still validates it.

    Raises:
        rapport.llm.ModelError: the model failed or its output stayed invalid.
    """
    output = await agent.respond(
        dialogue,
        instructions=render_instructions(schema),
        memory_context=memory_context,
        recall=recall,
        schema=arguments_model(schema),
        config=GenerateConfig(max_tokens=256),
    )
    arguments: dict[str, Any] = output.parsed.model_dump(exclude_none=True)
    return arguments
