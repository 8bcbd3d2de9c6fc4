"""Training examples from collab run logs: a session's conversation and what the user enforced.

Targets for the SFT cold start come from one of two sources:

- ``memory``: the notes the run's memory held after the session (its memory versions), i.e.
  the reflections a stronger model wrote during that run, under a templated reasoning part;
- ``template``: judge-free, one note per enforced preference (its name and enforcement test) after
  the notes carried from the user's earlier sessions.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from rapport import log
from rapport._errors import error_line
from rapport.envs.collab import EnforcementEvent
from rapport.memory import render_reflection


class PreferenceLike(Protocol):
    """What training needs of a taxonomy preference."""

    id: str
    name: str
    description: str
    enforcement: str
    """What a reply must do to meet it ("" where the taxonomy does not say)."""


class EnforcedPreference(BaseModel):
    """One preference the user enforced, with the words they used."""

    preference_id: str
    turn: int | None = None
    utterance: str = ""


class ReflectionExample(BaseModel):
    """One session to reflect on, with the ground truth the rewards check against."""

    id: str
    """``RUN/CONDITION/USER/SESSION``: unique across the data set."""
    run: str = ""
    user_id: str
    condition: str
    session_index: int
    spec_id: str = ""
    transcript: str
    prior_notes: list[str] = Field(default_factory=list)
    enforced: list[EnforcedPreference] = Field(default_factory=list)
    known_preference_ids: list[str] = Field(default_factory=list)
    """Preferences enforced in this user's earlier sessions (their notes are allowed)."""
    target: str | None = None
    """A reference reflection in the tagged layout (SFT target)."""
    target_source: Literal["template", "memory", "none"] = "none"

    @property
    def enforced_ids(self) -> list[str]:
        """The distinct enforced preference ids, in order of first enforcement."""
        return list(dict.fromkeys(e.preference_id for e in self.enforced))


def enforced_preferences(record: log.SessionRecord) -> list[EnforcedPreference]:
    """The enforcement events of a session with the user's words at that turn."""
    by_index = {t.index: t for t in record.turns}
    found = []
    for event in record.events_of(EnforcementEvent):
        turn = by_index.get(event.turn) if event.turn is not None else None
        text = turn.text if turn is not None and turn.speaker == "user" else ""
        found.append(
            EnforcedPreference(preference_id=event.preference_id, turn=event.turn, utterance=text)
        )
    return found


def template_reflection(
    enforced: Sequence[EnforcedPreference],
    prior_notes: Sequence[str],
    preferences: dict[str, PreferenceLike],
) -> str:
    """A reference reflection built from the enforced preferences (no model).

    Each new note is the preference's name and the test the user applies to replies.
    """
    notes = list(prior_notes)
    for pid in dict.fromkeys(e.preference_id for e in enforced):
        note = template_note(pid, preferences)
        if note not in notes:
            notes.append(note)
    return render_reflection(_reasons(enforced, preferences), notes)


def template_note(preference_id: str, preferences: dict[str, PreferenceLike]) -> str:
    """The note the template writes for one preference: ``Name: what a reply must do``."""
    pref = preferences.get(preference_id)
    if pref is None:
        return preference_id
    test = " ".join((pref.enforcement or pref.description).split())
    return f"{pref.name}: {test}"


def _reasons(enforced: Sequence[EnforcedPreference], preferences: dict[str, PreferenceLike]) -> str:
    reasons = []
    for item in enforced:
        pref = preferences.get(item.preference_id)
        name = pref.name if pref else item.preference_id
        said = f' ("{_clip(item.utterance)}")' if item.utterance else ""
        where = f"at turn {item.turn}" if item.turn is not None else "during the session"
        reasons.append(f"The user asked for {name} {where}{said}.")
    return " ".join(reasons) or "The user enforced no preference in this session."


def _clip(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


MemoryNotes = dict[tuple[str, str, int], list[str]]
"""(condition, user_id, version) -> the notes that memory version held."""


def build_examples(
    records: Iterable[log.SessionRecord],
    preferences: dict[str, PreferenceLike],
    *,
    run: str = "",
    memory_notes: MemoryNotes | None = None,
) -> list[ReflectionExample]:
    """One example per finished session, in each user's session order.

    With `memory_notes`, session k's prior notes are memory version k and its target the
    notes of version k+1 (what the run's reflection model wrote); otherwise both come from
    the template (`template_reflection`).
    """
    by_user: dict[tuple[str, str], list[log.SessionRecord]] = {}
    for record in records:
        if record.status == "ok":
            by_user.setdefault((record.condition, record.user_id), []).append(record)
    examples = []
    for (_condition, _user), sessions in sorted(by_user.items()):
        ordered = sorted(sessions, key=lambda r: r.index)
        examples.extend(_user_examples(ordered, preferences, run, memory_notes or {}))
    return examples


def _user_examples(
    sessions: list[log.SessionRecord],
    preferences: dict[str, PreferenceLike],
    run: str,
    memory_notes: MemoryNotes,
) -> list[ReflectionExample]:
    from rapport.memory import format_transcript

    notes: list[str] = []
    known: list[str] = []
    examples = []
    for record in sessions:
        key = (record.condition, record.user_id)
        enforced = enforced_preferences(record)
        before = memory_notes.get((*key, record.index))
        # An empty version (a condition without notes) gives no target: use the template.
        after = memory_notes.get((*key, record.index + 1)) or None
        prior = before if before is not None else notes
        if after is not None:
            target = render_reflection(_reasons(enforced, preferences), after)
        else:
            target = template_reflection(enforced, prior, preferences)
        examples.append(
            ReflectionExample(
                id=f"{run}/{record.condition}/{record.user_id}/{record.index}",
                run=run,
                user_id=record.user_id,
                condition=record.condition,
                session_index=record.index,
                spec_id=record.spec_id,
                transcript=format_transcript(record, pushback=True),
                prior_notes=list(prior),
                enforced=enforced,
                known_preference_ids=list(known),
                target=target,
                target_source="memory" if after is not None else "template",
            )
        )
        notes = after if after is not None else _notes_of(target, prior)
        known = list(dict.fromkeys([*known, *(e.preference_id for e in enforced)]))
    return examples


def memory_notes_of(versions: Iterable[log.MemoryVersion]) -> MemoryNotes:
    """Index memory versions' item texts by (condition, user_id, version)."""
    return {
        (v.condition, v.user_id, v.version): [item.text for item in v.state.items] for v in versions
    }


def _notes_of(reflection: str, fallback: list[str]) -> list[str]:
    from rapport.memory import parse_reflection

    parsed = parse_reflection(reflection)
    return list(parsed.notes) if parsed is not None else fallback


def split_by_user(
    examples: Sequence[ReflectionExample], *, eval_fraction: float = 0.2, seed: int = 0
) -> tuple[list[ReflectionExample], list[ReflectionExample]]:
    """Split so that no user has examples on both sides (at least one eval user when 2+)."""
    users = sorted({e.user_id for e in examples})
    random.Random(seed).shuffle(users)
    n_eval = round(len(users) * eval_fraction)
    if len(users) >= 2 and eval_fraction > 0:
        n_eval = min(max(n_eval, 1), len(users) - 1)
    held_out = set(users[:n_eval])
    train = [e for e in examples if e.user_id not in held_out]
    evaluation = [e for e in examples if e.user_id in held_out]
    return train, evaluation


def write_jsonl(examples: Iterable[BaseModel], path: Path) -> int:
    """Write one JSON object per line; returns the count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w") as out:
        for example in examples:
            out.write(example.model_dump_json() + "\n")
            count += 1
    return count


class ExampleFileError(ValueError):
    """A file that does not hold reflection examples (one line says where and why)."""


def read_examples(path: Path) -> list[ReflectionExample]:
    """Read the examples of a JSONL file written by `write_jsonl`.

    Raises:
        ExampleFileError: the file cannot be read, or a line is not an example.
    """
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ExampleFileError(f"cannot read examples from {path}: {exc}") from exc
    examples = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            examples.append(ReflectionExample.model_validate_json(line))
        except ValidationError as exc:
            raise ExampleFileError(
                f"{path}:{number}: not a reflection example ({error_line(exc)})"
            ) from exc
    return examples


def load_preferences(taxonomy: str) -> dict[str, Any]:
    """The preferences of a packaged taxonomy by id."""
    from rapport.envs.collab import load_taxonomy

    return {p.id: p for p in load_taxonomy(taxonomy).preferences}
