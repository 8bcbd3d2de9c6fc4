"""How often the simulated user's enforcement agrees with the deterministic checkers."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Literal

from rapport.log import Cell, SessionRecord, Table, UserGuardEvent

from ._checkers import is_clarifying_question
from ._types import CollabOutcome, PreferenceVerdictEvent


def enforcement_agreement(
    records: Iterable[SessionRecord], *, decision: Literal["final", "model"] = "final"
) -> float:
    """Share of (turn, checkable preference) pairs where the enforcement decision agrees
    with the checker (enforced exactly when the checker says the preference was violated).

    Turns where the agent only asked clarifying questions are skipped (nothing is enforced
    there by design).

    Args:
        records: recorded sessions (with their preference verdict events).
        decision: ``final``: what the simulator did after the code rules (``enforced``);
            ``model``: what the user model alone said (enforce when it judged a violation).

    Returns:
        The share in [0, 1]; NaN when there is no checkable pair.
    """
    agree = total = 0
    for _record, event in _checkable(records):
        enforce = event.enforced if decision == "final" else not event.model_satisfied
        total += 1
        agree += enforce == (not event.checker_satisfied)
    return agree / total if total else math.nan


def agreement_table(records: Iterable[SessionRecord]) -> Table:
    """The report's table: per condition, the checkable pairs and both agreement shares."""
    by_condition: dict[str, list[SessionRecord]] = {}
    for record in records:
        by_condition.setdefault(record.condition, []).append(record)
    rows: list[list[Cell]] = []
    for condition, group in sorted(by_condition.items()):
        pairs = sum(1 for _ in _checkable(group))
        if not pairs:
            continue
        final = enforcement_agreement(group)
        alone = enforcement_agreement(group, decision="model")
        rows.append([condition, pairs, round(final, 3), round(alone, 3)])
    return Table(
        title="Enforcement vs deterministic checkers (turn x checkable preference pairs)",
        columns=["condition", "pairs", "agreement", "user model alone"],
        rows=rows,
    )


def _checkable(
    records: Iterable[SessionRecord],
) -> Iterator[tuple[SessionRecord, PreferenceVerdictEvent]]:
    for record in records:
        for event in record.events_of(PreferenceVerdictEvent):
            if event.checker_satisfied is not None and not _after_clarifying(record, event):
                yield record, event


def _after_clarifying(record: SessionRecord, event: PreferenceVerdictEvent) -> bool:
    """Whether the agent message the verdict judged only asked clarifying questions."""
    if event.turn is None or event.turn < 1 or event.turn - 1 >= len(record.turns):
        return False
    judged = record.turns[event.turn - 1]
    return judged.speaker == "agent" and is_clarifying_question(judged.text)


def guard_table(records: Iterable[SessionRecord]) -> Table:
    """Per condition: user turns code wrote or replaced (role slips, pasted replies or
    criteria, problems shared for the user model), and how often the final draft differs
    from the answer the agent last stated (sessions where it stated one)."""
    from ._problems import stated_answer

    rows: list[list[Cell]] = []
    by_condition: dict[str, list[SessionRecord]] = {}
    for record in records:
        by_condition.setdefault(record.condition, []).append(record)
    for condition, group in sorted(by_condition.items()):
        user_turns = sum(sum(t.speaker == "user" for t in r.turns) for r in group)
        guarded = sum(len(r.events_of(UserGuardEvent)) for r in group)
        stated = differ = 0
        for r in group:
            outcome = r.outcome
            if not isinstance(outcome, CollabOutcome) or outcome.mode != "multiturn":
                continue
            answers = [
                a
                for t in r.turns
                if t.speaker == "agent" and (a := stated_answer(outcome.problem, t.text))
            ]
            if answers:
                stated += 1
                differ += outcome.draft.strip() != answers[-1].strip()
        share = round(differ / stated, 3) if stated else None  # shown as "-"
        rows.append([condition, user_turns, guarded, stated, share])
    return Table(
        title="User simulator: turns code replaced, and final draft vs the agent's last answer",
        columns=[
            "condition",
            "user turns",
            "replaced by code",
            "sessions with answer",
            "draft differs",
        ],
        rows=rows,
    )


def protocol_table(records: Iterable[SessionRecord]) -> Table:
    """Per condition: the datasets its problems came from, the grader of TS, and how often
    the judge's grade agrees with code's match (math-verify, option letter) where a judge
    graded."""
    from ._problems import is_correct

    by_condition: dict[str, list[CollabOutcome]] = {}
    for record in records:
        if isinstance(record.outcome, CollabOutcome):
            by_condition.setdefault(record.condition, []).append(record.outcome)
    rows: list[list[Cell]] = []
    for condition, outcomes in sorted(by_condition.items()):
        datasets = sorted({dataset_of(o.problem.source) for o in outcomes})
        graders = sorted({o.grader for o in outcomes})
        judged = [o for o in outcomes if o.judged is not None]
        agree = sum(o.judged == (bool(o.draft) and is_correct(o.problem, o.draft)) for o in judged)
        share = round(agree / len(judged), 3) if judged else math.nan
        rows.append([condition, ", ".join(datasets), ", ".join(graders), len(judged), share])
    return Table(
        title="Problems and grading (TS grader; judge vs code match where a judge graded)",
        columns=["condition", "dataset", "grader", "judged", "judge = match"],
        rows=rows,
    )


def dataset_of(source: str) -> str:
    """The dataset a problem source names (MSC's cache: its folder, ``mmlu``)."""
    return source.split("/")[0]


def prompts_table(records: Iterable[SessionRecord]) -> Table:
    """Per condition, the prompts its sessions read from a MultiSessionCollab checkout
    (``prompts_from``); no rows when every session ran our own wording."""
    by_condition: dict[str, set[str]] = {}
    for record in records:
        if isinstance(record.outcome, CollabOutcome):
            by_condition.setdefault(record.condition, set()).add(record.outcome.prompts)
    rows: list[list[Cell]] = [
        [condition, "; ".join(sorted(p or "packaged" for p in read))]
        for condition, read in sorted(by_condition.items())
        if any(read)
    ]
    return Table(
        title="Prompts read from a MultiSessionCollab checkout",
        columns=["condition", "prompts"],
        rows=rows,
    )
