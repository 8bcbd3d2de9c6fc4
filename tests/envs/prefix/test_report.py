"""PrefIx report tables on records built by hand: the paper's dimension ids, alpha over the
judged dimensions with its interval, ICC per dimension, run-to-run spread per judge."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rapport.envs.prefix import PrefixOutcome
from rapport.envs.prefix._report import headline_events, reliability_table, report_tables
from rapport.judges import cronbach_alpha_ci, icc2
from rapport.log import JudgeEvent, SessionRecord

PAPER_DIMS = [
    "initiative_timing",
    "interaction_coherence",
    "intent_alignment_drift",
    "commitment_consistency",
    "interaction_efficiency",
    "user_cognitive_load_trajectory",
    "interaction_preference_alignment",
    "overall_user_experience",
]
# sample -> judge -> one score per dimension (a sample's dimensions move together)
SCORES = {
    0: {"judge": [4, 4, 5, 4, 3, 4, 4, 4], "judge2": [5, 4, 5, 5, 4, 4, 5, 5]},
    1: {"judge": [2, 2, 3, 2, 1, 2, 2, 2], "judge2": [2, 3, 3, 2, 2, 2, 1, 2]},
    2: {"judge": [3, 3, 4, 3, 3, 3, 3, 3], "judge2": [4, 3, 3, 3, 3, 4, 3, 3]},
    3: {"judge": [5, 4, 5, 5, 4, 5, 5, 5], "judge2": [5, 5, 5, 4, 4, 5, 5, 4]},
}


def _record(sample: int, extra_runs: int = 0) -> SessionRecord:
    events = [
        JudgeEvent(judge=judge, dimension=d, score=float(v), repeat=0)
        for judge, row in SCORES[sample].items()
        for d, v in zip(PAPER_DIMS, row, strict=True)
    ]
    # the paper's stability runs: judge scores the first dimension 1 lower on odd runs
    events += [
        JudgeEvent(
            judge="judge",
            dimension=PAPER_DIMS[0],
            score=float(SCORES[sample]["judge"][0] - run % 2),
            repeat=run,
        )
        for run in range(1, extra_runs + 1)
    ]
    outcome = PrefixOutcome(task_id=f"t{sample}", settings=["tool_high"], reliability="paper")
    return SessionRecord(
        run_id="r",
        condition="p+none" if sample % 2 else "no_p+none",
        user_id="prefix-tool_high",
        index=sample,
        spec_id=f"t{sample}",
        events=events,
        outcome=outcome,
        scores={"accuracy": 1.0},
    )


def _rows(records: list[SessionRecord]) -> dict[str, list[object]]:
    return {str(r[0]): r for r in reliability_table(records).rows}


def test_the_papers_dimension_ids_fill_the_reliability_table() -> None:
    records = [_record(i) for i in SCORES]
    rows = _rows(records)
    assert [s for s in rows if s.startswith("ICC ")] == [f"ICC {d}" for d in PAPER_DIMS]
    matrix = np.array([[SCORES[i][j][1] for j in ("judge", "judge2")] for i in SCORES])
    single, average = icc2(matrix)
    coherence = rows["ICC interaction_coherence"]
    assert coherence[2] == pytest.approx(single, abs=1e-4)
    assert coherence[3] == pytest.approx(average, abs=1e-4)
    items = [
        [(SCORES[i]["judge"][k] + SCORES[i]["judge2"][k]) / 2 for k in range(8)] for i in SCORES
    ]
    alpha, low, high = cronbach_alpha_ci(items)
    alpha_row = rows["alpha over the 8 judged dimensions"]
    assert alpha_row[1] == 4 and alpha_row[2] == pytest.approx(alpha, abs=1e-4)
    assert alpha_row[4] == f"[{low:.3f}, {high:.3f}]"
    assert alpha is not None and not math.isnan(alpha)


def test_the_dimension_table_names_the_papers_ids() -> None:
    tables = report_tables([_record(i) for i in SCORES])
    by_dim = {r[0]: r for r in tables[2].rows}
    assert list(by_dim) == PAPER_DIMS


def test_stability_runs_give_the_spread_and_stay_out_of_the_headline() -> None:
    record = _record(0, extra_runs=19)
    assert len(headline_events(record)) == 16  # 2 judges x 8 dimensions, first run only
    rows = _rows([record, _record(1, extra_runs=19), _record(2), _record(3)])
    assert rows["run-to-run protocol: paper (20 judge runs on 2 sessions, kept out of the scores)"]
    judge = rows["mean std / mean CV over runs: judge"]
    runs = [4.0 - r % 2 for r in range(20)]  # sample 0: the first score 4, odd runs 3
    runs1 = [2.0 - r % 2 for r in range(20)]
    std = (np.std(runs, ddof=1) + np.std(runs1, ddof=1)) / 2
    cv = (np.std(runs, ddof=1) / np.mean(runs) + np.std(runs1, ddof=1) / np.mean(runs1)) / 2
    assert judge[1] == 2 and judge[2] == pytest.approx(std, abs=1e-4)
    assert judge[3] == pytest.approx(cv, abs=1e-4)
    assert rows["mean std / mean CV over runs: judge2"][1] == 0
