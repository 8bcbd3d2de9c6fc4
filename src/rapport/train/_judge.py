"""The judge-model reward: a model answers per preference and per note; code adds up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model, ModelError

from ._data import EnforcedPreference, PreferenceLike
from ._rewards import _notes


class PreferenceCheck(BaseModel):
    """Whether the notes capture one enforced preference."""

    preference_id: str = Field(max_length=80)
    captured: bool


class NoteCheck(BaseModel):
    """Whether one note is supported by what the user showed."""

    note: int
    supported: bool


class ReflectionJudgement(BaseModel):
    """The judge's structured answer."""

    preferences: list[PreferenceCheck] = Field(default_factory=list)
    notes: list[NoteCheck] = Field(default_factory=list)


def judgement_score(
    judgement: ReflectionJudgement, enforced_ids: Sequence[str], n_notes: int
) -> float:
    """Recall over the enforced ids times the share of supported notes (missing: not)."""
    captured = {c.preference_id for c in judgement.preferences if c.captured}
    wanted = set(enforced_ids)
    recall = len(wanted & captured) / len(wanted) if wanted else 1.0
    if n_notes == 0:
        return recall
    supported = {c.note for c in judgement.notes if c.supported and 1 <= c.note <= n_notes}
    return recall * len(supported) / n_notes


@dataclass
class JudgeReward:
    """Scores a reflection with a judge model (the ``judge`` role) in 0..1.

    Args:
        model: the judge.
        preferences: the taxonomy by id, to describe each enforced preference.
        max_tokens: the judge's reply budget.
    """

    model: Model
    preferences: dict[str, PreferenceLike]
    max_tokens: int = 400

    async def score(
        self,
        reflection: str,
        enforced: Sequence[EnforcedPreference],
        prior_notes: Sequence[str] = (),
    ) -> float | None:
        """The reward; 0.0 for an unparseable reflection, None when the judge fails."""
        parsed = _notes(reflection)
        if parsed is None:
            return 0.0
        notes = parsed[1]
        enforced_ids = list(dict.fromkeys(e.preference_id for e in enforced))
        if not notes:
            return 0.0 if enforced_ids else 1.0
        prompt = self._prompt(enforced, prior_notes, notes)
        config = GenerateConfig(max_tokens=self.max_tokens)
        try:
            out = await self.model.generate(
                [Message(role="user", content=prompt)], schema=ReflectionJudgement, config=config
            )
        except ModelError:
            return None
        return judgement_score(out.parsed, enforced_ids, len(notes))

    def _prompt(
        self,
        enforced: Sequence[EnforcedPreference],
        prior_notes: Sequence[str],
        notes: Sequence[str],
    ) -> str:
        template = (resources.files("rapport.train") / "judge_reward.md").read_text()
        return template.format(
            enforced=self._describe(enforced) or "(none)",
            prior="\n".join(f"- {n}" for n in prior_notes) or "(none)",
            notes="\n".join(f"{i}. {n}" for i, n in enumerate(notes, 1)),
        )

    def _describe(self, enforced: Sequence[EnforcedPreference]) -> str:
        lines = []
        for pid in dict.fromkeys(e.preference_id for e in enforced):
            pref = self.preferences.get(pid)
            about = " ".join(pref.description.split()) if pref else pid
            said = [e.utterance for e in enforced if e.preference_id == pid and e.utterance]
            quote = f' The user said: "{" ".join(said[0].split())[:200]}"' if said else ""
            lines.append(f"- {pid}: {about}{quote}")
        return "\n".join(lines)
