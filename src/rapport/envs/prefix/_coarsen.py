"""Task coarsening: a model merges a task's scripted turns into one instruction for the user
simulator; code checks that every ground-truth value the turns stated is still there."""

from __future__ import annotations

from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from rapport.llm import (
    GenerateConfig,
    Invalid,
    Message,
    Model,
    ModelError,
    ModelOutput,
    ask_again,
)

from ._executor import CallRefused, parse_call
from ._tasks import BfclTask


class CoarseTask(BaseModel):
    """The coarsened instruction."""

    instruction: str
    """No maxLength: grammar engines unroll it, one rule per character (max_tokens bounds it)."""


class Coarsened(BaseModel):
    """The outcome of coarsening one task."""

    instruction: str | None
    """None: the task was dropped."""
    reason: str = ""
    missing: list[str] = Field(default_factory=list)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple | set):
        return [x for item in value for x in _flatten(item)]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _flatten(item)]
    return [value]


def _spellings(value: Any) -> list[str]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, float) and value.is_integer():
        return [str(value), str(int(value))]
    return [str(value)]


def required_literals(task: BfclTask) -> list[str]:
    """Ground-truth argument values the scripted turns state verbatim (they must survive)."""
    said = " ".join(task.turns)
    required: list[str] = []
    for call in task.reference_calls:
        try:
            parsed = parse_call(call)
        except CallRefused:
            continue
        for value in _flatten([*parsed.args, *parsed.kwargs.values()]):
            found = next((s for s in _spellings(value) if len(s) >= 2 and s in said), None)
            if found is not None and found not in required:
                required.append(found)
    return required


def missing_literals(text: str, literals: list[str]) -> list[str]:
    """The required values the text lacks."""
    return [literal for literal in literals if literal not in text]


async def coarsen(task: BfclTask, model: Model, *, retries: int = 2) -> Coarsened:
    """One coarse instruction for the task, or a dropped task with the reason."""
    required = required_literals(task)
    turns = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(task.turns) if t.strip())
    template = resources.files(__package__).joinpath("coarsen_prompt.md").read_text("utf-8")
    messages = [Message(role="user", content=template.format(turns=turns))]
    missing: list[str] = []

    def keeps_values(output: ModelOutput, last: bool) -> str:
        missing[:] = missing_literals(output.parsed.instruction, required)
        if missing and not last:
            raise Invalid(f"These values are missing, keep them verbatim: {missing}")
        return str(output.parsed.instruction)

    try:
        text = await ask_again(
            model,
            messages,
            keeps_values,
            feedback=lambda reason: reason,
            attempts=retries + 1,
            schema=CoarseTask,
            config=GenerateConfig(max_tokens=700),
            what="coarse instruction",
        )
    except ModelError as exc:
        return Coarsened(instruction=None, reason=f"coarsening failed: {exc}"[:500])
    if not missing:
        return Coarsened(instruction=text)
    return Coarsened(
        instruction=None,
        reason=f"task {task.id} dropped: coarse instruction lost values {missing}",
        missing=missing,
    )
