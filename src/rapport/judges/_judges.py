"""A multi-judge Likert scorer: several judge roles x repeats, 1-5 scores with anchors.

Each judge reads a rubric (dimensions with anchored 1-5 scales) and a numbered transcript,
and returns per dimension a score, a justification and the turns it cites as evidence.
Code checks that every cited turn exists; a judge citing turns that do not exist is asked
again with the error shown, and what it still cites wrongly is dropped and counted.
The final score of a dimension is the mean over judges of each judge's mean over repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, create_model

from rapport.llm import (
    GenerateConfig,
    Invalid,
    Message,
    ModelError,
    ModelOutput,
    ModelRoles,
    ask_again,
    derive_seed,
)
from rapport.log import ErrorEvent, JudgeEvent


class Dimension(BaseModel):
    """One rubric dimension with its anchored 1-5 scale."""

    id: str
    name: str
    question: str
    anchors: dict[int, str]
    """Score -> what that score means (at least 1, 3 and 5)."""

    def render(self) -> str:
        """The dimension as it appears in the judge prompt."""
        lines = [f"### {self.id}: {self.name}", self.question]
        lines += [f"- {score}: {text}" for score, text in sorted(self.anchors.items())]
        return "\n".join(lines)


class DimensionScore(BaseModel):
    """A judge's verdict on one dimension."""

    score: int = Field(ge=1, le=5)
    justification: str = Field(max_length=300)
    evidence_turns: list[int] = Field(default_factory=list, max_length=6)


def verdict_schema(dimensions: Sequence[Dimension]) -> type[BaseModel]:
    """The structured output a judge fills: one `DimensionScore` per dimension, by id."""
    fields: dict[str, Any] = {d.id: (DimensionScore, ...) for d in dimensions}
    return create_model("JudgeVerdict", **fields)


class JudgeScore(BaseModel):
    """One judge's score on one dimension in one repeat."""

    judge: str
    repeat: int
    dimension: str
    score: float
    justification: str = ""
    evidence_turns: list[int] = Field(default_factory=list)
    invalid_evidence: list[int] = Field(default_factory=list)
    """Cited turns that do not exist in the transcript (dropped from ``evidence_turns``)."""


@dataclass
class JudgeResult:
    """All scores of one multi-judge run over one transcript."""

    scores: list[JudgeScore] = field(default_factory=list)
    errors: list[ErrorEvent] = field(default_factory=list)
    """One event per judge call that failed (``where``: the judge's role, ``error_type``:
    the exception's class); the caller decides what a failed judge means for its session."""

    def judge_means(self) -> dict[str, dict[str, float]]:
        """Dimension -> judge -> mean over that judge's repeats."""
        sums: dict[str, dict[str, list[float]]] = {}
        for s in self.scores:
            sums.setdefault(s.dimension, {}).setdefault(s.judge, []).append(s.score)
        return {d: {j: sum(v) / len(v) for j, v in by.items()} for d, by in sums.items()}

    def means(self) -> dict[str, float]:
        """Dimension -> mean over judges (each judge first averaged over its repeats)."""
        return {d: sum(by.values()) / len(by) for d, by in self.judge_means().items()}

    def events(self) -> list[JudgeEvent]:
        """The raw scores as run-log events (the failed calls are in ``errors``)."""
        return [
            JudgeEvent(
                judge=s.judge,
                dimension=s.dimension,
                score=s.score,
                justification=s.justification,
                evidence_turns=s.evidence_turns,
                repeat=s.repeat,
            )
            for s in self.scores
        ]


def judge_means_from_events(events: Sequence[Any]) -> dict[str, float]:
    """Dimension -> mean over judges, rebuilt from logged `JudgeEvent`s."""
    result = JudgeResult(
        scores=[
            JudgeScore(judge=e.judge, repeat=e.repeat, dimension=e.dimension, score=e.score)
            for e in events
            if isinstance(e, JudgeEvent)
        ]
    )
    return result.means()


@dataclass
class MultiJudge:
    """Scores a transcript with every judge role, ``repeats`` times each.

    Args:
        dimensions: the rubric.
        instructions: the judge's system prompt (the rubric is appended to it).
        judges: judge roles (default: ``models.judges()`` at scoring time).
        repeats: samples per judge; repeats above the first sample at ``temperature``.
        temperature: sampling temperature of repeats (the first repeat decodes greedily).
        citation_retries: re-asks when cited turns do not exist.
    """

    dimensions: list[Dimension]
    instructions: str
    judges: list[str] | None = None
    repeats: int = 1
    temperature: float = 0.7
    citation_retries: int = 1

    def system_prompt(self) -> str:
        """Instructions followed by the rendered rubric."""
        rubric = "\n\n".join(d.render() for d in self.dimensions)
        return f"{self.instructions.strip()}\n\n## Rubric\n\n{rubric}"

    async def score(
        self, models: ModelRoles, transcript: str, turn_ids: set[int], *, key: str = ""
    ) -> JudgeResult:
        """Every judge x repeat on one transcript.

        Args:
            models: where the judge roles resolve.
            transcript: the numbered transcript and any context the judges need.
            turn_ids: the turn numbers that exist (cited evidence must be among them).
            key: a stable key of the item judged (seeds the repeats).
        """
        result = JudgeResult()
        for judge in self.judges or models.judges():
            for repeat in range(self.repeats):
                try:
                    result.scores += await self._one(
                        models, judge, repeat, transcript, turn_ids, key
                    )
                except ModelError as exc:
                    result.errors.append(
                        ErrorEvent(
                            where=exc.role or judge,
                            message=f"repeat {repeat}: {str(exc)[:500]}",
                            error_type=type(exc).__name__,
                        )
                    )
        return result

    def _config(self, models: ModelRoles, judge: str, repeat: int, key: str) -> GenerateConfig:
        if repeat == 0:
            return GenerateConfig(max_tokens=1500)
        seed = derive_seed(models.seed, f"{key}:{judge}:{repeat}")
        return GenerateConfig(max_tokens=1500, temperature=self.temperature, seed=seed)

    async def _one(
        self,
        models: ModelRoles,
        judge: str,
        repeat: int,
        transcript: str,
        turn_ids: set[int],
        key: str,
    ) -> list[JudgeScore]:
        schema = verdict_schema(self.dimensions)
        messages = [
            Message(role="system", content=self.system_prompt()),
            Message(role="user", content=transcript),
        ]
        config = self._config(models, judge, repeat, key)

        def check(output: ModelOutput, last: bool) -> list[JudgeScore]:
            bad = _invalid_citations(output.parsed, self.dimensions, turn_ids)
            if bad and not last:  # on the last attempt wrong citations are dropped, counted
                raise Invalid(f"Turns {sorted(bad)} do not exist")
            return self._scores(output.parsed, judge, repeat, turn_ids)

        return await ask_again(
            models.get(judge),
            messages,
            check,
            feedback=lambda why: (
                f"{why}; cite only turns from {sorted(turn_ids)}. "
                "Reply again with the whole JSON object."
            ),
            attempts=self.citation_retries + 1,
            schema=schema,
            config=config,
            what="verdict",
        )

    def _scores(self, parsed: Any, judge: str, repeat: int, turn_ids: set[int]) -> list[JudgeScore]:
        scores = []
        for d in self.dimensions:
            verdict: DimensionScore = dict(parsed)[d.id]
            scores.append(
                JudgeScore(
                    judge=judge,
                    repeat=repeat,
                    dimension=d.id,
                    score=float(verdict.score),
                    justification=verdict.justification,
                    evidence_turns=[t for t in verdict.evidence_turns if t in turn_ids],
                    invalid_evidence=[t for t in verdict.evidence_turns if t not in turn_ids],
                )
            )
        return scores


def _invalid_citations(
    parsed: Any, dimensions: Sequence[Dimension], turn_ids: set[int]
) -> set[int]:
    verdicts = dict(parsed)
    cited = {t for d in dimensions for t in verdicts[d.id].evidence_turns}
    return cited - turn_ids
