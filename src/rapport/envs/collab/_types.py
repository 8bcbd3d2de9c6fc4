"""MultiSessionCollab's record types: its problems, task, outcome and events."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rapport.log import BaseEvent, BaseOutcome, BaseTask


def letter(index: int) -> str:
    """The option letter of a 0-based index (0 -> A)."""
    return chr(ord("A") + index)


class Problem(BaseModel):
    """One self-contained problem with a gold answer (MultiSessionCollab's sessions)."""

    id: str
    source: str
    kind: Literal["math", "choice"]
    question: str
    answer: str
    """The gold answer: a math expression, or the correct letter for multiple choice."""
    choices: list[str] = Field(default_factory=list)
    """For multiple choice: the options in order A, B, C ..."""
    reference: str = ""
    """The reference solution as the source states it (MultiSessionCollab's ``solution``: a
    worked solution, or the correct option's text), which an LLM grader reads; empty:
    `answer`."""
    text: str = ""
    """The problem exactly as the source wrote it (what the user is given); empty: the
    question with its lettered options."""

    def prompt(self) -> str:
        """The problem as the user is given it: the source's text, else the question with
        its lettered options."""
        if self.text:
            return self.text
        if not self.choices:
            return self.question
        options = "\n".join(f"{letter(i)}. {c}" for i, c in enumerate(self.choices))
        return f"{self.question}\n\n{options}"


class CollabTask(BaseTask):
    """MultiSessionCollab: the problem the user brings."""

    kind: Literal["collab"] = "collab"
    problem: Problem


class CollabOutcome(BaseOutcome):
    """MultiSessionCollab: the user's final draft and the problem it answers."""

    kind: Literal["collab"] = "collab"
    draft: str = ""
    """The user's final draft answer (what TS grades)."""
    answer: str
    problem_id: str
    problem: Problem
    mode: Literal["multiturn", "direct"] = "multiturn"
    grader: Literal["judge", "match"] = "match"
    """What grades the draft: ``judge`` (the judge role against the reference solution)
    or ``match`` (code: math-verify, or the option letter)."""
    judged: bool | None = None
    """The judge's verdict on the draft (None: not judged)."""
    prompts: str = ""
    """The prompts the session read from a MultiSessionCollab checkout: the file with its
    sha256 and the names of those used (``""``: our own wording, the default)."""


class EnforcementEvent(BaseEvent):
    """The user enforced a preference the agent broke."""

    kind: Literal["enforcement"] = "enforcement"
    preference_id: str

    def pushback_preference(self) -> str:
        """The enforced preference (memories read enforcements as `Pushback`)."""
        return self.preference_id


class PreferenceVerdictEvent(BaseEvent):
    """The simulator's per-turn judgement of one preference, beside the code checker's."""

    kind: Literal["preference_verdict"] = "preference_verdict"
    preference_id: str
    model_satisfied: bool
    """What the user model said (under MSC's own prompt, which gives one enforce flag per
    message: the flag's negation)."""
    checker_satisfied: bool | None = None
    """What the deterministic checker said (None: not checkable by code)."""
    enforced: bool = False


class DraftUpdateEvent(BaseEvent):
    """The user updated its hidden draft answer."""

    kind: Literal["draft_update"] = "draft_update"
    draft: str
