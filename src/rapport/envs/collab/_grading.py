"""Task success as MultiSessionCollab grades it: the judge role compares the user's final draft
with the reference solution and says 1 or 0."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model
from rapport.log import JudgeEvent

from .._protocol import SessionLog
from ._msc_prompts import Template, packaged_prompts
from ._types import Problem

GRADER_CONFIG = GenerateConfig(temperature=0.0, max_tokens=1024)
"""MSC's judge sampling (its code: temperature 0, at most 1024 new tokens)."""
DIMENSION = "task_success"
"""The `JudgeEvent` dimension a grade is recorded under."""


class Grade(BaseModel):
    """The judge's verdict on one draft."""

    reasoning: str = ""
    accuracy: int = Field(ge=0, le=1)


def grading_messages(
    problem: Problem, draft: str, template: Template | None = None
) -> list[Message]:
    """The judge's prompt: the problem, its reference solution and the draft (`template`:
    the judge prompt; default: our own)."""
    text = (template or packaged_prompts().judge).render(
        problem=problem.prompt(),
        reference=problem.reference or problem.answer,
        draft=draft,
    )
    return [Message(role="user", content=text)]


async def grade(
    judge: Model, problem: Problem, draft: str, log: SessionLog, *, template: Template | None = None
) -> bool:
    """Whether the judge finds the draft correct; the verdict is logged as a `JudgeEvent`.

    Raises:
        ModelError: the judge failed (OutputValidationError: no valid verdict).
    """
    messages = grading_messages(problem, draft, template)
    out = await judge.generate(messages, schema=Grade, config=GRADER_CONFIG)
    verdict: Grade = out.parsed
    log.event(
        JudgeEvent(
            judge="judge",
            dimension=DIMENSION,
            score=float(verdict.accuracy),
            justification=verdict.reasoning,
        )
    )
    return verdict.accuracy == 1
