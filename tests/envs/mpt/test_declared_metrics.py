"""MPT declares each metric once (regime, unit, reducer, direction); its tables title every
column from the declaration, and the date rule is an option the outcome records, not a score."""

from __future__ import annotations

from rapport.envs.mpt import MPTBenchmark, MPTEvalOutcome, instance_scores
from rapport.envs.mpt._metrics import DECLARED
from rapport.log import SessionRecord


def _record(outcome: MPTEvalOutcome, scores: dict[str, float] | None = None) -> SessionRecord:
    return SessionRecord(
        condition="none",
        user_id="u",
        index=1,
        spec_id="u-e0",
        split="eval",
        outcome=outcome,
        scores=scores if scores is not None else instance_scores(outcome, lambda s, v: False),
    )


def _outcome(**fields: object) -> MPTEvalOutcome:
    return MPTEvalOutcome(
        challenge="recall",
        query_type="context-free",
        domain="GetFlights",
        gold={"name": "GetFlights", "arguments": {"departure_date": "2019-03-05"}},
        predicted={"departure_date": "2019-03-05"},
        **fields,  # type: ignore[arg-type]
    )


def test_the_declarations_give_the_benchmark_its_metrics_and_directions() -> None:
    assert MPTBenchmark.metrics == (
        *("p_em", "ea_f1", "oa_f1", "precision", "recall", "f1", "token_ratio"),
    )
    assert MPTBenchmark.lower_is_better == frozenset({"token_ratio"})
    assert DECLARED["f1"].column() == "F1 (micro over context-free instances)"
    assert DECLARED["p_em"].population() == "mean over context-guided instances"


def test_the_main_table_names_the_date_rule_its_outcomes_record() -> None:
    paper_era = _record(_outcome(date_rule="dateparser"))
    assert "dateparser" not in paper_era.scores and "month_names" not in paper_era.scores
    title = MPTBenchmark.report_tables([paper_era])[0].title
    assert title.endswith("(95% bootstrap CI; dates: dateparser, as the paper-era scorer)")
    default = MPTBenchmark.report_tables([_record(_outcome(date_rule="exp7"))])[0].title
    assert default.endswith("(95% bootstrap CI; dates: as PRefine's scorer)")


def test_a_run_stored_with_the_rule_among_its_scores_still_names_it() -> None:
    scores = instance_scores(_outcome(), lambda s, v: False) | {"month_names": 1.0}
    title = MPTBenchmark.report_tables([_record(_outcome(), scores)])[0].title
    assert title.endswith("dates: month names read too (month_dates))")
    mixed = [_record(_outcome(), scores), _record(_outcome(date_rule="exp7"))]
    assert "mixed rules" in MPTBenchmark.report_tables(mixed)[0].title
