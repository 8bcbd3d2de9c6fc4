"""The paper's judging (Section 3.4.2 and PrefIX's judge runner,
``bfcl_eval/eval_checker/LLM_as_a_judge/``): one call per dimension, each with the persona,
its description and its trajectory hints, over the transcript cut to its first and last
halves of 8,000 characters, at temperature 0.1; every judge role scores every dimension.

The prompt is ours by default (package data); with ``--rubric-from`` it is the one PrefIX's
runner sends (`DimensionTemplate.from_checkout`), read at run time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from rapport.judges import Dimension, JudgeResult, JudgeScore
from rapport.llm import GenerateConfig, Message, ModelError, ModelOutput, ModelRoles, derive_seed
from rapport.log import ErrorEvent, Turn

PAPER_WINDOW = 8000
"""PrefIX's ``max_transcript_chars``: the judges read the first and last 4,000 characters."""
PAPER_TEMPERATURE = 0.1
"""PrefIX's judge temperature (``generate_judgment_with_openrouter``)."""
CUT_MARK = "\n...[truncated]...\n"

_ROLES = {
    "user": ("user", "user_message"),
    "agent": ("assistant", "assistant_message"),
    "assistant": ("assistant", "assistant_message"),
    "tool": ("tool", "function_call_output"),
}


class DimensionVerdict(BaseModel):
    """A judge's answer on one dimension (PrefIX's output shape)."""

    dimension: str = Field(max_length=80)
    score: int = Field(ge=1, le=5)
    justification: str = Field(default="", max_length=400)
    evidence_turn_ids: list[str] = Field(default_factory=list, max_length=8)


def transcript_lines(turns: Sequence[Turn]) -> str:
    """The session as PrefIX's runner lays a history out: one line per message with its
    ``turn_id``, role and kind, calls written into the assistant's content."""
    lines = []
    for turn in turns:
        role, kind = _ROLES.get(turn.speaker, (turn.speaker, "system"))
        content = turn.text.strip()
        if turn.tool_calls:
            calls = ", ".join(f"{c.name}({json.dumps(c.arguments)})" for c in turn.tool_calls)
            content = f"{content} [calls: {calls}]".strip()
        lines.append(f"- turn_id=t{turn.index} | role={role} | kind={kind} | content={content}")
    return "\n".join(lines)


def head_tail(text: str, max_chars: int = PAPER_WINDOW) -> tuple[str, bool]:
    """The text whole if it fits, else its first and last ``max_chars // 2`` characters
    (PrefIX's ``_format_transcript``); and whether it was cut."""
    if len(text) <= max_chars:
        return text, False
    half = max_chars // 2
    return text[:half] + CUT_MARK + text[-half:], True


def anchor_text(dimension: Dimension) -> str:
    """The dimension's anchors, one ``score: meaning`` line each."""
    return "\n".join(f"{score}: {text}" for score, text in sorted(dimension.anchors.items()))


@dataclass(frozen=True)
class DimensionTemplate:
    """The per-dimension prompt: a system message and a user message, with ``{{persona}}``,
    ``{{persona_description}}``, ``{{persona_trajectory}}``, ``{{transcript}}``,
    ``{{dimension}}`` and ``{{anchors}}`` filled per call."""

    user: str
    system: str = "You rate interaction quality for the person described; {{persona}}."

    def render(self, fills: dict[str, str]) -> list[Message]:
        """The two messages of one call."""

        def fill(text: str) -> str:
            for key, value in fills.items():
                text = text.replace("{{" + key + "}}", value)
            return text

        return [
            Message(role="system", content=fill(self.system)),
            Message(role="user", content=fill(self.user)),
        ]


@dataclass(frozen=True)
class Persona:
    """Who the judges rate for: the setting ids, their description, trajectory hints."""

    name: str
    description: str
    trajectory: str


@dataclass
class DimensionJudge:
    """Scores a session one dimension per call, every judge role, ``runs`` times each.

    Args:
        dimensions: the rubric (ours or the paper's).
        template: the prompt.
        runs: runs per judge (the paper's reliability protocol: 20 on its 5 samples).
        max_chars: the transcript window (first and last halves).
        temperature: every run's temperature.
    """

    dimensions: list[Dimension]
    template: DimensionTemplate
    runs: int = 1
    max_chars: int = PAPER_WINDOW
    temperature: float = PAPER_TEMPERATURE

    def prompt(self, persona: Persona, transcript: str, dimension: Dimension) -> list[Message]:
        """The messages of one call: the persona, the transcript, one dimension."""
        return self.template.render(
            {
                "persona": persona.name,
                "persona_description": persona.description,
                "persona_trajectory": persona.trajectory,
                "transcript": transcript,
                "dimension": dimension.id,
                "anchors": anchor_text(dimension),
            }
        )

    async def score(
        self, models: ModelRoles, turns: Sequence[Turn], persona: Persona, *, key: str = ""
    ) -> JudgeResult:
        """Every judge x run x dimension on one session; the first failed call ends the
        scoring (its session is an error whatever the other calls give)."""
        transcript, _cut = head_tail(transcript_lines(turns), self.max_chars)
        ids = {f"t{t.index}": t.index for t in turns}
        result = JudgeResult()
        calls = [
            (judge, run, dimension)
            for judge in models.judges()
            for run in range(self.runs)
            for dimension in self.dimensions
        ]
        for judge, run, dimension in calls:
            messages = self.prompt(persona, transcript, dimension)
            seed = derive_seed(models.seed, f"{key}:{judge}:{run}:{dimension.id}")
            config = GenerateConfig(temperature=self.temperature, seed=seed, max_tokens=600)
            try:
                output = await models.get(judge).generate(
                    messages, schema=DimensionVerdict, config=config
                )
            except ModelError as exc:
                result.errors.append(_error(exc, judge, run, dimension.id))
                break
            result.scores.append(_score(output, judge, run, dimension.id, ids))
        return result


def _score(
    output: ModelOutput, judge: str, run: int, dimension: str, ids: dict[str, int]
) -> JudgeScore:
    verdict = DimensionVerdict.model_validate(output.parsed)
    cited = [str(t).strip() for t in verdict.evidence_turn_ids]
    return JudgeScore(
        judge=judge,
        repeat=run,
        dimension=dimension,
        score=float(verdict.score),
        justification=verdict.justification,
        evidence_turns=[ids[t] for t in cited if t in ids],
        invalid_evidence=[],
    )


def _error(exc: ModelError, judge: str, run: int, dimension: str) -> ErrorEvent:
    return ErrorEvent(
        where=exc.role or judge,
        message=f"run {run}, {dimension}: {str(exc)[:500]}",
        error_type=type(exc).__name__,
    )
