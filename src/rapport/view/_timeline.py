"""A session as a reader follows it: each turn with the events that happened at it, and two
sessions of the same problem side by side, aligned by turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rapport.log import JudgeEvent, SessionRecord, Turn

BEFORE = frozenset({"recall"})
"""Event kinds shown above their turn's text: what the agent saw before it spoke."""


@dataclass
class TurnView:
    """One turn and its events."""

    index: int
    turn: Turn | None
    before: list[Any] = field(default_factory=list)
    after: list[Any] = field(default_factory=list)
    cited_by: list[str] = field(default_factory=list)
    """Judge dimensions that cite this turn as evidence."""

    @property
    def kinds(self) -> set[str]:
        """The kinds of event at this turn."""
        return {e.kind for e in (*self.before, *self.after)}


@dataclass
class SameRecall:
    """A recall whose text is the one shown at an earlier turn (shown as a reference to it,
    not again)."""

    turn: int
    """The turn the text is shown at."""
    kind: str = "recall_same"


@dataclass
class Timeline:
    """A session laid out turn by turn."""

    turns: list[TurnView]
    session_events: list[Any]
    """Events of the session as a whole (turn None): notes, judges, errors after the end."""
    judges: list[tuple[str, Any]]
    """Each judge score with its label (``judge2 · repeat 2 · clarity`` where a judge
    scored the session more than once)."""


def judge_label(event: Any, repeated: bool) -> str:
    """``judge · clarity``; with the repeat (counted from 1) where the judge repeats."""
    repeat = f" · repeat {event.repeat + 1}" if repeated else ""
    return f"{event.judge}{repeat} · {event.dimension}"


def timeline(record: SessionRecord) -> Timeline:
    """Each turn with its events; events past the last turn get a turn of their own."""
    last = max([t.index for t in record.turns], default=-1)
    placed = [(e.turn, e) for e in record.events if e.turn is not None]
    last = max([last, *(t for t, _ in placed)])
    views = {i: TurnView(index=i, turn=None) for i in range(last + 1)}
    for turn in record.turns:
        views[turn.index].turn = turn
    for at, event in placed:
        view = views[at]
        (view.before if event.kind in BEFORE else view.after).append(event)
    judges = record.events_of(JudgeEvent)
    repeated = any(j.repeat > 0 for j in judges)
    labelled = [(judge_label(j, repeated), j) for j in judges]
    for label, judge in labelled:
        for cited in judge.evidence_turns:
            if cited in views:
                views[cited].cited_by.append(label)
    shown = [v for v in views.values() if v.turn is not None or v.before or v.after]
    _refer_to_same_recalls(shown)
    whole = [e for e in record.events if e.turn is None and e.kind != "judge"]
    return Timeline(turns=shown, session_events=whole, judges=labelled)


def _refer_to_same_recalls(views: list[TurnView]) -> None:
    """A recall that repeats the text shown last becomes a `SameRecall` pointing at it."""
    shown: tuple[str, int] | None = None
    for view in views:
        for i, event in enumerate(view.before):
            if event.kind != "recall":
                continue
            if shown is not None and event.text == shown[0]:
                view.before[i] = SameRecall(turn=shown[1])
            else:
                shown = (event.text, view.index)


@dataclass
class AlignedRow:
    """Turn ``index`` under each compared condition (None where that session is shorter)."""

    index: int
    cells: list[TurnView | None]


def align(records: list[SessionRecord]) -> list[AlignedRow]:
    """The turns of several sessions side by side, by turn index."""
    lines = [{v.index: v for v in timeline(r).turns} for r in records]
    indices = sorted({i for line in lines for i in line})
    return [AlignedRow(index=i, cells=[line.get(i) for line in lines]) for i in indices]
