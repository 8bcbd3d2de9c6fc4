"""The study's report tables (the paper's Table 5 and Figure 10, as numbers): the
conversation length and each rated survey item (adherence, memory, confidence, overall
satisfaction) per session and condition (median; mean with a 95% bootstrap CI), the memory
minus no-memory difference per session paired by participant, the impact question's
answers, and the free text per session."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from rapport.log import Cell, SessionRecord, Table

from ._design import SESSIONS
from ._outcome import study_outcome
from ._survey import FREE_TEXT, IMPACT_CHOICES, IMPACT_QUESTION, ITEM_IDS

METRICS = ("length", *ITEM_IDS)


def mean_ci(values: Sequence[float], *, seed: int = 0, resamples: int = 2000) -> str:
    """``mean [low, high]``: the mean with a 95% percentile bootstrap CI."""
    if not values:
        return "-"
    data = np.asarray(values, dtype=float)
    if len(data) == 1:
        return f"{data[0]:.2f} [-]"
    rng = np.random.default_rng(seed)
    means = rng.choice(data, size=(resamples, len(data)), replace=True).mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return f"{data.mean():.2f} [{low:.2f}, {high:.2f}]"


def _cell(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):g}; {mean_ci(values)}"


def _done(records: Sequence[SessionRecord]) -> list[SessionRecord]:
    return [r for r in records if r.status == "ok"]


def _order(records: Sequence[SessionRecord]) -> list[str]:
    return list(dict.fromkeys(r.condition for r in records))


def _type(record: SessionRecord) -> str:
    outcome = study_outcome(record)
    return outcome.study_type if outcome is not None else "-"


def _place(record: SessionRecord) -> tuple[int, str, int]:
    """Where a session sits in its condition: the study type's slot, the type, and the
    session's number in its block (1..SESSIONS)."""
    slot, within = divmod(record.index, SESSIONS)
    return slot, _type(record), within + 1


def survey_table(records: Sequence[SessionRecord]) -> Table:
    """Condition x study type x session: participants, then each metric's median; mean
    [95% CI]."""
    groups: dict[tuple[str, tuple[int, str, int]], list[SessionRecord]] = defaultdict(list)
    for r in _done(records):
        groups[(r.condition, _place(r))].append(r)
    order = _order(records)
    rows: list[list[Cell]] = []
    for (condition, (_, study_type, number)), group in sorted(
        groups.items(), key=lambda g: (order.index(g[0][0]), g[0][1])
    ):
        cells: list[Cell] = [condition, study_type, number, len(group)]
        cells += [_cell([r.scores[m] for r in group if m in r.scores]) for m in METRICS]
        rows.append(cells)
    return Table(
        title="study: per session, median; mean [95% CI] (ratings 1-5, length in messages)",
        columns=["condition", "study type", "session", "participants", *METRICS],
        rows=rows,
    )


def memory_difference_table(records: Sequence[SessionRecord]) -> list[Table]:
    """Per memory condition, study type and session: its score minus the same participant's
    score at the same session of the same type without memory, mean [95% CI] over
    participants."""
    conditions = _order(records)
    if "none" not in conditions or len(conditions) < 2:
        return []
    done = _done(records)
    scores = {(r.condition, r.user_id, r.index): r.scores for r in done}
    places = {(r.condition, r.user_id, r.index): _place(r) for r in done}
    rows: list[list[Cell]] = []
    for condition in (c for c in conditions if c != "none"):
        for place in sorted({p for (c, _, _), p in places.items() if c == condition}):
            pairs = [
                (s, scores[("none", u, i)])
                for (c, u, i), s in scores.items()
                if c == condition and places[(c, u, i)] == place and ("none", u, i) in scores
            ]
            _, study_type, number = place
            cells: list[Cell] = [condition, study_type, number, len(pairs)]
            for m in METRICS:
                diffs = [a[m] - b[m] for a, b in pairs if m in a and m in b]
                cells.append(mean_ci(diffs))
            rows.append(cells)
    return [
        Table(
            title="study: memory - no memory, per session, paired by participant (mean [95% CI])",
            columns=["condition", "study type", "session", "pairs", *METRICS],
            rows=rows,
        )
    ]


def impact_table(records: Sequence[SessionRecord]) -> Table:
    """The impact question: per condition, study type and session, how many participants
    chose each answer."""
    groups: dict[tuple[str, tuple[int, str, int]], list[str]] = defaultdict(list)
    for r in _done(records):
        outcome = study_outcome(r)
        if outcome is not None and outcome.impact is not None:
            groups[(r.condition, _place(r))].append(outcome.impact)
    order = _order(records)
    rows: list[list[Cell]] = []
    for (condition, (_, study_type, number)), chosen in sorted(
        groups.items(), key=lambda g: (order.index(g[0][0]), g[0][1])
    ):
        counts: list[Cell] = [chosen.count(c.id) for c in IMPACT_CHOICES]
        rows.append([condition, study_type, number, len(chosen), *counts])
    return Table(
        title="study: " + IMPACT_QUESTION.lower().rstrip("?") + " (participants per answer)",
        columns=["condition", "study type", "session", "participants"]
        + [c.label for c in IMPACT_CHOICES],
        rows=rows,
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def free_text_table(records: Sequence[SessionRecord]) -> Table:
    """Both free-text answers of every survey (what stood out; preferences of the
    participant's own), by condition, study type and session."""
    rows: list[list[Cell]] = []
    order = _order(records)
    for r in sorted(records, key=lambda r: (order.index(r.condition), _place(r), r.user_id)):
        outcome = study_outcome(r)
        if outcome is None:
            continue
        texts = [_flat(outcome.feedback), _flat(outcome.own_preferences)]
        if any(texts):
            _, study_type, number = _place(r)
            rows.append([r.condition, study_type, number, r.user_id, *(t or "-" for t in texts)])
    return Table(
        title="study: free-text answers per session",
        columns=["condition", "study type", "session", "participant"]
        + [item.id.replace("_", " ") for item in FREE_TEXT],
        rows=rows,
    )
