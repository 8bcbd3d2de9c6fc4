"""The generate -> verify -> refine loop of PRefine.

The generator proposes the full hypothesis set from the finished session, the prior memory
and (after the first round) the verifier's feedback on rejected candidates. A candidate that
copies the generator prompt's own wording is rejected by code before the verifier sees it.
The verifier judges every other candidate on four criteria (its reply must hold one verdict
per candidate); code accepts a candidate only when all four pass. Rejected candidates go back
to the generator with the reason, for at most ``max_rounds``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Literal, get_args

from pydantic import BaseModel, Field, create_model

from rapport.llm import GenerateConfig, Message, Model

Level = Literal["value", "domain", "cross-domain"]
CRITERIA = ("support", "abstraction", "actionable", "temporal")


class Hypothesis(BaseModel):
    """An abstract preference hypothesis."""

    text: str = Field(min_length=3, max_length=90)
    level: Level = "domain"
    support: int = Field(default=1, ge=0, le=100)
    """Sessions consistent with it."""


class HypothesisSet(BaseModel):
    """The generator's output: the complete proposed memory."""

    hypotheses: list[Hypothesis] = Field(default_factory=list, max_length=8)


class Verdict(BaseModel):
    """The verifier's judgement of one candidate (by its index)."""

    index: int = Field(ge=0, le=20)
    support: bool
    abstraction: bool
    actionable: bool
    temporal: bool
    feedback: str = Field(default="", max_length=200)

    def passed(self) -> bool:
        """All four criteria hold."""
        return self.support and self.abstraction and self.actionable and self.temporal


class VerdictSet(BaseModel):
    """The verifier's output."""

    verdicts: list[Verdict] = Field(default_factory=list, max_length=12)


class RefineRound(BaseModel):
    """What happened in one round (kept for inspection)."""

    round: int
    candidates: list[Hypothesis]
    accepted: list[int] = Field(default_factory=list)
    rejected: dict[int, str] = Field(default_factory=dict)
    """Index -> the feedback returned to the generator."""


@lru_cache(maxsize=4)
def _prompt(name: str) -> str:
    return (resources.files("rapport.memory.prefine") / "prompts" / f"{name}.md").read_text("utf-8")


ECHO = "copies the instructions' wording instead of describing this user"

_QUOTED = re.compile(r'"[^"]*"')
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@lru_cache(maxsize=1)
def _instruction_lines() -> tuple[str, ...]:
    """The generator prompt's fixed lines as words: no placeholders, no quoted examples."""
    text = _QUOTED.sub(" ", _PLACEHOLDER.sub(" ", _prompt("generate")))
    lines = (_words(line) for line in re.split(r"[\n:;]", text))
    return tuple(line for line in lines if len(line.split()) >= 4)


def echoes_prompt(hypothesis: Hypothesis) -> bool:
    """The text repeats an instruction of the generator prompt (four words or more), or an
    instruction line appears inside it: a small model's echo, not a hypothesis."""
    words = _words(hypothesis.text)
    if not words:
        return True
    lines = _instruction_lines()
    if len(words.split()) >= 4 and any(words in line for line in lines):
        return True
    return any(line in words for line in lines)


_LEVELS = "|".join(get_args(Level))
_COPIED_TAG = re.compile(
    rf"\s*\[\s*(?:(?:{_LEVELS})\s*;[^\[\]]{{0,40}}|support\s*\d+\s*)\]", re.IGNORECASE
)
_CUT_TAG = re.compile(
    rf"\s*\[\s*(?:(?:{_LEVELS}|cross|support)\b[^\[\]]*|\d+[^\[\]]*|;[^\[\]]*|)$", re.IGNORECASE
)


def strip_copied_tags(text: str) -> str:
    """The text without copies of the ``[level; support n]`` tags the prompts put after each
    hypothesis (whole, or cut off by the length limit): small models copy them into the
    text, where they pile up round after round."""
    text = _COPIED_TAG.sub("", text)
    while (stripped := _CUT_TAG.sub("", text)) != text:
        text = stripped
    return " ".join(text.split())


def render_memory(hypotheses: list[Hypothesis]) -> str:
    """Hypotheses as prompt lines (``(none yet)`` when empty)."""
    if not hypotheses:
        return "(none yet)"
    return "\n".join(f"- {h.text} [{h.level}; support {h.support}]" for h in hypotheses)


def _feedback_block(rejected: list[tuple[Hypothesis, str]]) -> str:
    if not rejected:
        return ""
    lines = [f'- "{h.text}": {reason}' for h, reason in rejected]
    return (
        "\nThe verifier rejected these candidates last round; fix or drop them:\n"
        + "\n".join(lines)
        + "\n"
    )


async def generate(
    model: Model,
    memory: list[Hypothesis],
    transcript: str,
    rejected: list[tuple[Hypothesis, str]],
    limit: int,
) -> list[Hypothesis]:
    """One generator call: the proposed complete hypothesis set."""
    prompt = _prompt("generate").format(
        memory=render_memory(memory),
        transcript=transcript,
        feedback=_feedback_block(rejected),
        limit=limit,
    )
    out = await model.generate(
        [Message(role="user", content=prompt)],
        schema=HypothesisSet,
        config=GenerateConfig(max_tokens=400),
    )
    hypotheses: dict[str, Hypothesis] = {}
    for proposed in out.parsed.hypotheses:
        text = strip_copied_tags(proposed.text)
        key = _key_text(text)
        if len(text) >= 3 and key not in hypotheses:
            hypotheses[key] = proposed.model_copy(update={"text": text})
    return list(hypotheses.values())[:limit]


async def verify(
    model: Model, memory: list[Hypothesis], transcript: str, candidates: list[Hypothesis]
) -> dict[int, Verdict]:
    """One verifier call: candidate position -> verdict.

    The schema asks for exactly one verdict per candidate. Verdicts are matched by their
    ``index`` when those are the candidates' positions, each once; otherwise by order."""
    listing = "\n".join(
        f"{i}. {h.text} [{h.level}; support {h.support}]" for i, h in enumerate(candidates)
    )
    prompt = _prompt("verify").format(
        memory=render_memory(memory), transcript=transcript, candidates=listing
    )
    out = await model.generate(
        [Message(role="user", content=prompt)],
        schema=_verdicts_for(len(candidates)),
        config=GenerateConfig(max_tokens=120 * len(candidates) + 40),
    )
    verdicts: list[Verdict] = out.parsed.verdicts
    if sorted(v.index for v in verdicts) == list(range(len(candidates))):
        return {v.index: v for v in verdicts}
    return dict(enumerate(verdicts))


@lru_cache(maxsize=16)
def _verdicts_for(n: int) -> type[VerdictSet]:
    """`VerdictSet` holding exactly `n` verdicts."""
    return create_model(
        "VerdictSet",
        __base__=VerdictSet,
        verdicts=(list[Verdict], Field(min_length=n, max_length=n)),
    )


def _reason(verdict: Verdict | None) -> str:
    if verdict is None:
        return "the verifier gave no verdict for it"
    checked = verdict.model_dump()
    failed = [c for c in CRITERIA if not checked[c]]
    return f"fails {', '.join(failed)}" + (f": {verdict.feedback}" if verdict.feedback else "")


async def refine(
    model: Model,
    memory: list[Hypothesis],
    transcript: str,
    *,
    max_rounds: int = 3,
    limit: int = 5,
) -> tuple[list[Hypothesis], list[RefineRound]]:
    """Run the loop; returns the accepted hypotheses (the new memory) and the rounds.

    Raises:
        rapport.llm.ModelError: a generator or verifier output stayed invalid.
    """
    accepted: dict[str, Hypothesis] = {}
    rejected: list[tuple[Hypothesis, str]] = []
    rounds: list[RefineRound] = []
    for number in range(1, max_rounds + 1):
        candidates = await generate(model, memory, transcript, rejected, limit)
        candidates = [c for c in candidates if _key(c) not in accepted]
        step = RefineRound(round=number, candidates=candidates)
        echoes = {i for i, c in enumerate(candidates) if echoes_prompt(c)}
        judged = [c for i, c in enumerate(candidates) if i not in echoes]
        found = await verify(model, memory, transcript, judged) if judged else {}
        positions = [i for i in range(len(candidates)) if i not in echoes]
        verdicts = {positions[k]: v for k, v in found.items()}
        rejected = []
        for i, candidate in enumerate(candidates):
            verdict = verdicts.get(i)
            if i in echoes:
                step.rejected[i] = ECHO
                rejected.append((candidate, ECHO))
            elif verdict is not None and verdict.passed():
                accepted[_key(candidate)] = candidate
                step.accepted.append(i)
            else:
                step.rejected[i] = _reason(verdict)
                rejected.append((candidate, step.rejected[i]))
        rounds.append(step)
        if not rejected:
            break
    return list(accepted.values())[:limit], rounds


def _key_text(text: str) -> str:
    return " ".join(text.lower().split())


def _key(hypothesis: Hypothesis) -> str:
    return _key_text(hypothesis.text)
