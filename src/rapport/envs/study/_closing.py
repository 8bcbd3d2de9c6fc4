"""The closing questionnaire in the run store and the report: its answers ride on the
participant's last session as a `ClosingEvent`, and the report has a table per item (the
part preferred, "the assistant learned how I like to work", the comments) per condition
order and overall."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from rapport.log import BaseEvent, Cell, SessionRecord, Table

from ._survey import MAX_FEEDBACK_CHARS, ClosingAnswers
from ._tables import mean_ci

ALL = "all"
"""The row over every condition order."""


class ClosingEvent(BaseEvent):
    """A participant's closing questionnaire, on their last session (the session as a
    whole: it was answered after the conversation)."""

    kind: Literal["study_closing"] = "study_closing"
    order: list[str]
    """The participant's conditions in the order they met them."""
    preferred: Literal["first", "second", "no difference"]
    learned: int = Field(ge=1, le=5)
    comments: str = Field(default="", max_length=MAX_FEEDBACK_CHARS)

    @classmethod
    def of(cls, answers: ClosingAnswers, order: Sequence[str]) -> ClosingEvent:
        """The event of a participant's answers."""
        return cls(order=list(order), **answers.model_dump())

    def preferred_condition(self) -> str:
        """The condition of the part the participant preferred ("no difference" as is)."""
        if self.preferred == "no difference":
            return self.preferred
        position = 0 if self.preferred == "first" else 1
        return self.order[position] if position < len(self.order) else self.preferred

    def order_name(self) -> str:
        """The condition order as the report names it (``none then reflection``)."""
        return " then ".join(self.order)


def closing_events(records: Sequence[SessionRecord]) -> dict[str, ClosingEvent]:
    """Each participant's closing questionnaire (the first one stored), by participant."""
    found: dict[str, ClosingEvent] = {}
    for record in records:
        for event in record.events_of(ClosingEvent):
            found.setdefault(record.user_id, event)
    return found


def _by_order(events: dict[str, ClosingEvent]) -> list[tuple[str, list[ClosingEvent]]]:
    groups: dict[str, list[ClosingEvent]] = defaultdict(list)
    for _participant, event in sorted(events.items()):
        groups[event.order_name()].append(event)
    return [*sorted(groups.items()), (ALL, [e for _, e in sorted(events.items())])]


def closing_tables(records: Sequence[SessionRecord]) -> list[Table]:
    """The closing questionnaire, one table per item (none when nobody answered it)."""
    events = closing_events(records)
    if not events:
        return []
    groups = _by_order(events)
    conditions = list(dict.fromkeys(c for _, e in sorted(events.items()) for c in e.order))
    learned: list[list[Cell]] = []
    preferred: list[list[Cell]] = []
    for order, group in groups:
        scores = [float(e.learned) for e in group]
        learned.append([order, len(group), f"{statistics.median(scores):g}; {mean_ci(scores)}"])
        chosen = [e.preferred_condition() for e in group]
        preferred.append(
            [order, len(group), *(chosen.count(c) for c in [*conditions, "no difference"])]
        )
    comments: list[list[Cell]] = [
        [participant, e.order_name(), " ".join(e.comments.split())]
        for participant, e in sorted(events.items())
        if e.comments.strip()
    ]
    return [
        Table(
            title="study closing: the assistant learned how I like to work (1-5), "
            "median; mean [95% CI]",
            columns=["condition order", "participants", "learned"],
            rows=learned,
        ),
        Table(
            title="study closing: the part whose assistant participants would keep",
            columns=["condition order", "participants", *conditions, "no difference"],
            rows=preferred,
        ),
        Table(
            title="study closing: comments",
            columns=["participant", "condition order", "comments"],
            rows=comments,
        ),
    ]
