"""Deterministic preference alignment: interaction-tool calls against a setting's pattern.

A trial is a timeline of system calls and interaction-tool calls. Each pattern rule opens
slots (e.g. ``before_write``: one slot in the gap before each state-changing call) that an
interaction call of the rule's tool fills. A slot about one system call (before or after
it) is filled only by a call whose structured fields agree with it: its
``execution_function`` names that function, and a ``display_params`` lists every argument
the call got. Recall is filled slots over slots; precision is the interaction calls of the
tools the setting concerns that fill a slot, over all of them.
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
    function: str | None = None
    """An interaction call's ``execution_function`` (None: the tool has none, or it was left
    out where optional)."""
    params: list[str] | None = None
    """A system call's argument names; a ``display_params`` call's ``param_names``."""
    reply: int = 0
    """The agent reply the call came in (calls of one reply run together)."""


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


Slot = tuple[int, int, Step | None]
"""(start, end) window of timeline positions, and the system call the slot is about."""


def _slots(rule: PatternRule, timeline: Sequence[Step]) -> list[Slot]:
    system = [i for i, s in enumerate(timeline) if not s.interaction]
    if not system or rule.when == "never":
        return []
    gaps = _gaps(timeline)  # gaps[j] precedes system[j]; gaps[-1] follows the last one
    steps = [timeline[i] for i in system]

    def before(j: int) -> Slot:
        return (*gaps[j], steps[j])

    def after(j: int) -> Slot:
        return (*gaps[j + 1], steps[j])

    writes = [j for j, s in enumerate(steps) if s.wrote]
    reads = [j for j, s in enumerate(steps) if not s.wrote and not s.failed]
    failures = [j for j, s in enumerate(steps) if s.failed]
    retries = [
        j
        for j in range(1, len(steps))
        if steps[j - 1].failed and steps[j].name == steps[j - 1].name
    ]
    # The last system call of each reply that ran two or more of them together.
    batches = [
        j
        for j in range(len(steps))
        if (j + 1 == len(steps) or steps[j + 1].reply != steps[j].reply)
        and sum(s.reply == steps[j].reply for s in steps) >= 2
    ]
    choose: dict[str, list[Slot]] = {
        "before_call": [before(j) for j in range(len(steps))],
        "before_write": [before(j) for j in writes],
        "before_first_write": [(*gaps[writes[0]], None)] if writes else [],
        "before_first_call": [(*gaps[0], None)],
        "after_call": [after(j) for j in range(len(steps))],
        "after_read": [after(j) for j in reads],
        "after_failure": [after(j) for j in failures],
        "before_retry": [before(j) for j in retries],
        # After each batch of calls run together; calls run one by one open one slot that
        # nothing can fill (the chain was not run in parallel).
        "after_parallel": [(*gaps[j + 1], None) for j in batches]
        if batches
        else [(0, 0, None)] * (len(steps) >= 2),
        "after_first_call": [(system[0], len(timeline), None)],
        "at_end": [(*gaps[-1], None)],
    }
    return choose[rule.when]


def _agrees(call: Step, about: Step | None) -> bool:
    """Whether an interaction call's fields agree with the system call its slot is about."""
    if about is None:
        return True
    if call.function is not None and call.function != about.name:
        return False
    if call.name == "display_params" and about.params is not None:
        return set(about.params) <= set(call.params or [])
    return True


def align(setting: Setting, timeline: Sequence[Step]) -> Alignment:
    """Match a trial's interaction calls against the setting's pattern."""
    concerned = {rule.tool for rule in setting.pattern}
    used: set[int] = set()
    slots = filled = 0
    for rule in setting.pattern:
        for start, end, about in _slots(rule, timeline):
            slots += 1
            hits = [
                i
                for i in range(start + 1, end)
                if i not in used and timeline[i].name == rule.tool and _agrees(timeline[i], about)
            ]
            if rule.when == "after_first_call":  # every such call belongs to the one slot
                used.update(hits)
            elif hits:
                hits = hits[:1]
                used.add(hits[0])
            filled += bool(hits)
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
