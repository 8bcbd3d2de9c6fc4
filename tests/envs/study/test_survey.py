"""The post-session survey as MultiSessionCollab's user study asked it, and the report's
Table 5 with every measure of the paper's."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rapport.envs.study import (
    FREE_TEXT,
    IMPACT_CHOICES,
    ITEM_IDS,
    SURVEY_ITEMS,
    StudyBenchmark,
    StudyOutcome,
    SurveyAnswers,
    free_text_table,
    impact_table,
    survey_table,
)
from rapport.log import SessionRecord, Turn

RATINGS = {"adherence": 3, "memory": 1, "confidence": 4, "satisfaction": 5}


def test_the_survey_rates_the_papers_four_table5_measures_on_anchored_scales() -> None:
    assert ITEM_IDS == ("adherence", "memory", "confidence", "satisfaction")
    assert all(len(set(item.anchors)) == 5 for item in SURVEY_ITEMS)
    assert StudyBenchmark.metrics == ("length", *ITEM_IDS)


def test_impact_is_a_choice_of_four_and_both_free_texts_are_asked() -> None:
    assert [c.id for c in IMPACT_CHOICES] == [
        "ignored_hurt",
        "ignored_no_harm",
        "followed_no_gain",
        "followed_helped",
    ]
    assert [t.id for t in FREE_TEXT] == ["feedback", "own_preferences"]
    with pytest.raises(ValidationError, match="impact"):
        SurveyAnswers(ratings=RATINGS, impact="somewhat")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="satisfaction"):
        SurveyAnswers(ratings={**RATINGS, "satisfaction": 0} | {}, impact="followed_helped")
    with pytest.raises(ValidationError, match="answer every question"):
        SurveyAnswers(
            ratings={k: v for k, v in RATINGS.items() if k != "satisfaction"},
            impact="followed_helped",
        )


def test_a_blocks_first_session_fixes_the_memory_answer() -> None:
    assert SurveyAnswers.fixed_in_first_session() == {"memory": 1}


def _record(condition: str, user: str, index: int, rating: int, impact: str) -> SessionRecord:
    return SessionRecord(
        condition=condition,
        user_id=user,
        index=index,
        spec_id=f"coding-{index}",
        turns=[Turn(index=0, speaker="user", text="hi"), Turn(index=1, speaker="agent", text="x")],
        scores={"length": 2.0, **{k: float(rating) for k in ITEM_IDS}},
        outcome=StudyOutcome(
            study_type="coding",
            problem_id=f"coding-{index}",
            domain="coding",
            problem_kind="debugging",
            block=0,
            ratings={k: rating for k in ITEM_IDS},
            impact=impact,
            feedback=f"stood out {user}",
            own_preferences=f"type hints {user}" if user == "p01" else "",
        ),
    )


RECORDS = [
    _record("reflection", "p01", 0, 4, "followed_helped"),
    _record("reflection", "p02", 0, 2, "followed_helped"),
    _record("none", "p01", 0, 3, "ignored_hurt"),
]


def test_table5_has_the_satisfaction_column() -> None:
    table = survey_table(RECORDS)
    assert table.columns[-1] == "satisfaction"
    reflection = next(r for r in table.rows if r[0] == "reflection")
    assert reflection[:4] == ["reflection", "coding", 1, 2]
    assert str(reflection[-1]).startswith("3; 3.00 [")


def test_the_impact_answers_are_counted_per_session() -> None:
    table = impact_table(RECORDS)
    assert table.columns[4:] == [c.label for c in IMPACT_CHOICES]
    assert [r[3:] for r in table.rows] == [[2, 0, 0, 0, 2], [1, 1, 0, 0, 0]]


def test_both_free_text_answers_are_in_the_report() -> None:
    table = free_text_table(RECORDS)
    assert table.columns[-2:] == ["feedback", "own preferences"]
    assert ["reflection", "coding", 1, "p01", "stood out p01", "type hints p01"] in table.rows
    assert ["reflection", "coding", 1, "p02", "stood out p02", "-"] in table.rows
