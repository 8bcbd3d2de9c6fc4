"""Rewards for a reflection: the tagged layout, and coverage of what the user enforced.

Each reward is a number in 0..1. Coverage rewards multiply recall (share of the session's
enforced preferences the notes capture) by precision (share of notes that state only
preferences the user showed, in this session or an earlier one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

from ._data import PreferenceLike

_TAGS = ("<reasoning>", "</reasoning>", "<notes>", "</notes>")

_STOPWORDS = frozenset(
    word
    for line in (resources.files("rapport.train") / "stopwords.txt").read_text().splitlines()
    if not line.startswith("#")
    for word in line.split()
)


def _notes(text: str) -> tuple[str, list[str]] | None:
    from rapport.memory import parse_reflection

    parsed = parse_reflection(text)
    if parsed is None:
        return None
    return parsed.reasoning, [n for n in parsed.notes if n.strip()]


def format_reward(text: str) -> float:
    """1.0 for a well-formed reflection with a reasoning part, partial credit for the tags.

    A reflection that `parse_reflection` accepts, with non-empty reasoning, scores 1.0;
    otherwise each of the four tags present in order earns 0.125 (so 0.5 at most).
    """
    parsed = _notes(text)
    if parsed is not None and parsed[0].strip():
        return 1.0
    found, position = 0, 0
    for tag in _TAGS:
        at = text.find(tag, position)
        if at < 0:
            continue
        found, position = found + 1, at + len(tag)
    return 0.125 * found


def content_words(text: str) -> set[str]:
    """Lowercase content words, plural ``s`` dropped: the unit of keyword matching."""
    words = re.findall(r"[a-z][a-z0-9'-]+", text.lower())
    return {w.removesuffix("s") if len(w) > 4 else w for w in words if w not in _STOPWORDS}


@dataclass
class PreferenceMatcher:
    """Maps a note to the taxonomy preference it states, by keyword overlap (deterministic).

    Words are weighted by rarity across the taxonomy (a word in every preference tells
    nothing). A note matches the preference whose name, description and enforcement test
    explain the largest
    weighted share of the note's words, if that share reaches `threshold`; a note naming a
    preference id (``max_three_sentences``) matches it outright.
    """

    preferences: dict[str, PreferenceLike]
    threshold: float = 0.3

    def __post_init__(self) -> None:
        self._keys = {
            pid: content_words(f"{p.name} {p.description} {p.enforcement}")
            for pid, p in self.preferences.items()
        }
        n = max(len(self._keys), 1)
        counts: dict[str, int] = {}
        for keys in self._keys.values():
            for word in keys:
                counts[word] = counts.get(word, 0) + 1
        self._weight = {w: math.log((n + 1) / c) for w, c in counts.items()}
        self._unknown = math.log(n + 1)

    def match(self, note: str) -> str | None:
        """The id of the preference the note states, or None."""
        lowered = note.lower()
        for pid in self.preferences:
            if "_" in pid and re.search(rf"\b{re.escape(pid.lower())}\b", lowered):
                return pid
        words = content_words(note)
        total = sum(self._weight.get(w, self._unknown) for w in words)
        if total == 0:
            return None
        best, best_score = None, 0.0
        for pid, keys in self._keys.items():
            score = sum(self._weight[w] for w in words & keys) / total
            if score > best_score:
                best, best_score = pid, score
        return best if best_score >= self.threshold else None


def coverage_score(
    notes: Sequence[str],
    enforced_ids: Iterable[str],
    known_ids: Iterable[str],
    matcher: PreferenceMatcher,
) -> float:
    """Recall of the enforced preferences times the precision of the notes.

    A note matching a preference the user never showed counts as invented; a note matching
    no preference counts as half invented (it may be a vague or made-up preference).
    """
    enforced = set(enforced_ids)
    allowed = enforced | set(known_ids)
    matched = [matcher.match(n) for n in notes]
    recall = len(enforced & {m for m in matched if m}) / len(enforced) if enforced else 1.0
    if not notes:
        return recall
    penalty = sum(
        1.0 if m is not None and m not in allowed else 0.5 if m is None else 0.0 for m in matched
    )
    return recall * (1.0 - penalty / len(notes))


def coverage_reward(
    text: str,
    enforced_ids: Iterable[str],
    known_ids: Iterable[str],
    matcher: PreferenceMatcher,
) -> float:
    """`coverage_score` of a reflection's notes; 0.0 when the layout cannot be parsed."""
    parsed = _notes(text)
    if parsed is None:
        return 0.0
    return coverage_score(parsed[1], enforced_ids, known_ids, matcher)
