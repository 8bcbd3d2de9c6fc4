"""A user's memory over time: each version with what changed from the one before, the
enforcements of the session that produced it, and the preferences the simulator held."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Literal

from rapport.envs.collab import (
    EnforcementEvent,
    PreferenceVerdictEvent,
    TaxonomyError,
    load_taxonomy,
)
from rapport.log import ErrorEvent, MemoryItem, MemoryVersion, SessionRecord

Change = Literal["added", "removed", "changed"]


@dataclass
class WordDiff:
    """A changed item, word by word: (``equal`` | ``insert`` | ``delete``, text) pieces."""

    pieces: list[tuple[str, str]]


@dataclass
class ItemChange:
    """One item that differs from the previous version."""

    change: Change
    text: str
    old_text: str = ""
    diff: WordDiff | None = None


@dataclass
class VersionView:
    """One memory version and how it came to be."""

    version: int
    items: list[MemoryItem]
    changes: list[ItemChange]
    session: int | None
    """The session learned into this version (None: the empty version 0)."""
    enforcements: list[Any] = field(default_factory=list)
    """The enforcement events of that session."""
    errors: list[Any] = field(default_factory=list)
    """Error events of that session (a failed ``memory.learn`` shows here)."""


@dataclass
class PreferenceRow:
    """One preference the simulated user held, across the user's sessions."""

    preference_id: str
    description: str
    enforced: list[int]
    """Enforcements per session index."""
    satisfied: list[float | None]
    """Share of the user's per-turn verdicts that found it satisfied, per session."""

    @property
    def status(self) -> str:
        """Whether the enforcements stopped: a reading of when (or whether) it was learned."""
        hits = [i for i, n in enumerate(self.enforced) if n]
        if not hits:
            return "never enforced"
        if hits[-1] == len(self.enforced) - 1:
            return f"still enforced in the last session ({len(hits)} sessions)"
        return f"not enforced after session {hits[-1] + 1}"


def word_diff(old: str, new: str) -> WordDiff:
    """Word-level pieces that turn `old` into `new`."""
    a, b = old.split(), new.split()
    pieces: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            pieces.append(("delete", " ".join(a[i1:i2])))
        if op in ("insert", "replace"):
            pieces.append(("insert", " ".join(b[j1:j2])))
        if op == "equal":
            pieces.append(("equal", " ".join(a[i1:i2])))
    return WordDiff(pieces=pieces)


def item_changes(old: list[MemoryItem], new: list[MemoryItem]) -> list[ItemChange]:
    """What differs between two versions, matched by item text (ids may be renumbered)."""
    a, b = [i.text for i in old], [i.text for i in new]
    changes: list[ItemChange] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            changes.append(
                ItemChange("changed", b[j1 + k], a[i1 + k], word_diff(a[i1 + k], b[j1 + k]))
            )
        changes.extend(ItemChange("removed", t) for t in a[i1 + paired : i2])
        changes.extend(ItemChange("added", t) for t in b[j1 + paired : j2])
    return changes


def version_views(
    versions: list[MemoryVersion], sessions: dict[int, SessionRecord]
) -> list[VersionView]:
    """Each version beside the one before it and the session that led to it."""
    views: list[VersionView] = []
    previous: list[MemoryItem] = []
    for v in versions:
        learned = sessions.get(v.version - 1) if v.version > 0 else None
        views.append(
            VersionView(
                version=v.version,
                items=v.state.items,
                changes=item_changes(previous, v.state.items),
                session=v.version - 1 if v.version > 0 else None,
                enforcements=learned.events_of(EnforcementEvent) if learned else [],
                errors=learned.events_of(ErrorEvent) if learned else [],
            )
        )
        previous = v.state.items
    return views


def preference_rows(
    preference_ids: list[str], sessions: list[SessionRecord], benchmark: str
) -> list[PreferenceRow]:
    """Per preference the user held: enforcements and satisfied share, session by session."""
    names = preference_names(benchmark)
    ordered = sorted(sessions, key=lambda r: r.index)
    rows: list[PreferenceRow] = []
    for pid in preference_ids:
        enforced = [
            sum(e.preference_id == pid for e in r.events_of(EnforcementEvent)) for r in ordered
        ]
        satisfied: list[float | None] = []
        for r in ordered:
            verdicts = [e for e in r.events_of(PreferenceVerdictEvent) if e.preference_id == pid]
            share = sum(e.model_satisfied for e in verdicts) / len(verdicts) if verdicts else None
            satisfied.append(share)
        rows.append(PreferenceRow(pid, names.get(pid, ""), enforced, satisfied))
    return rows


def preference_names(benchmark: str) -> dict[str, str]:
    """Preference id -> its description, from the benchmark's taxonomy (collab's by default)."""
    for name in (benchmark, "collab"):
        try:
            taxonomy = load_taxonomy(name)
        except (TaxonomyError, OSError, ValueError):
            continue
        return {p.id: p.description for p in taxonomy.preferences}
    return {}
