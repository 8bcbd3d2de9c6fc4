"""Deterministic preference alignment: interaction-tool calls against a setting's pattern.

A trial is a timeline of system calls and interaction-tool calls. Each pattern rule opens
slots (e.g. ``before_write``: one slot in the gap before each state-changing call) that an
interaction call of the rule's tool fills. Recall is filled slots over slots; precision is
the interaction calls of the tools the setting concerns that fill a slot, over all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from ._settings import PatternRule, Setting


class Step(BaseModel):
    """One entry of a trial's timeline."""

    name: str
    interaction: bool
    wrote: bool = False
    failed: bool = False


class Alignment(BaseModel):
    """Precision and recall of the interaction-tool calls against the expected pattern."""

    precision: float
    recall: float | None
    """None when the trial opened no slot (nothing the pattern asks for happened)."""
    slots: int
    filled: int
    concerned_calls: int
    matched_calls: int


def _gaps(timeline: Sequence[Step]) -> list[tuple[int, int]]:
    """(start, end) index windows around system calls: gap i lies before system call i."""
    system = [i for i, step in enumerate(timeline) if not step.interaction]
    bounds = [-1, *system, len(timeline)]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _slots(rule: PatternRule, timeline: Sequence[Step]) -> list[tuple[int, int]]:
    system = [i for i, s in enumerate(timeline) if not s.interaction]
    if not system or rule.when == "never":
        return []
    gaps = _gaps(timeline)  # gaps[j] precedes system[j]; gaps[-1] follows the last one
    steps = [timeline[i] for i in system]
    writes = [j for j, s in enumerate(steps) if s.wrote]
    reads = [j for j, s in enumerate(steps) if not s.wrote and not s.failed]
    failures = [j for j, s in enumerate(steps) if s.failed]
    retries = [
        j
        for j in range(1, len(steps))
        if steps[j - 1].failed and steps[j].name == steps[j - 1].name
    ]
    choose = {
        "before_call": [gaps[j] for j in range(len(steps))],
        "before_write": [gaps[j] for j in writes],
        "before_first_write": [gaps[writes[0]]] if writes else [],
        "before_first_call": [gaps[0]],
        "after_call": [gaps[j + 1] for j in range(len(steps))],
        "after_read": [gaps[j + 1] for j in reads],
        "after_failure": [gaps[j + 1] for j in failures],
        "before_retry": [gaps[j] for j in retries],
        "at_end": [gaps[-1]],
    }
    return choose[rule.when]


def align(setting: Setting, timeline: Sequence[Step]) -> Alignment:
    """Match a trial's interaction calls against the setting's pattern."""
    concerned = {rule.tool for rule in setting.pattern}
    used: set[int] = set()
    slots = filled = 0
    for rule in setting.pattern:
        for start, end in _slots(rule, timeline):
            slots += 1
            hit = next(
                (
                    i
                    for i in range(start + 1, end)
                    if i not in used and timeline[i].name == rule.tool
                ),
                None,
            )
            if hit is not None:
                used.add(hit)
                filled += 1
    calls = [i for i, s in enumerate(timeline) if s.interaction and s.name in concerned]
    matched = sum(1 for i in calls if i in used)
    return Alignment(
        precision=matched / len(calls) if calls else 1.0,
        recall=filled / slots if slots else None,
        slots=slots,
        filled=filled,
        concerned_calls=len(calls),
        matched_calls=matched,
    )
