"""Every MPT metric against hand-computed examples."""

from __future__ import annotations

import pytest

from rapport.envs.mpt import (
    MPTEvalOutcome,
    count_tokens,
    exact_match,
    instance_scores,
    micro_f1,
    oa_counts,
    strict_counts,
    summarize,
)

GOLD = {"city": "Denver", "date": "2026-03-02", "price_range": "cheap", "party_size": 2}


def _allows(slot: str, value: object) -> bool:
    return (slot == "city" and value in {"Denver", "Austin"}) or slot == "date"


def test_p_em_needs_every_preference_slot() -> None:
    assert (
        exact_match(
            {"price_range": "cheap", "party_size": "2"}, GOLD, ["price_range", "party_size"]
        )
        == 1.0
    )
    # case is kept, as PRefine's scorer keeps it
    assert exact_match({"price_range": "Cheap", "party_size": 2}, GOLD, ["price_range"]) == 0.0
    assert exact_match({"price_range": "cheap"}, GOLD, ["price_range", "party_size"]) == 0.0
    assert exact_match({"price_range": "moderate", "party_size": 2}, GOLD, ["price_range"]) == 0.0


def test_oa_counts_any_allowed_value_on_open_slots() -> None:
    pred = {"city": "Austin", "date": "2026-05-05", "price_range": "cheap", "seating": "bar"}
    # city: open + allowed -> tp; date: open -> tp; price_range exact -> tp; seating not in gold
    assert oa_counts(pred, GOLD, ["city", "date"], _allows) == (3, 4, 4)
    # without open slots only the exact price_range counts
    assert oa_counts(pred, GOLD, [], _allows) == (1, 4, 4)
    # a value outside the allowed set does not count even on an open slot
    assert oa_counts({"city": "Paris"}, GOLD, ["city"], _allows) == (0, 1, 4)


def test_strict_f1_ignores_open_slots() -> None:
    pred = {"city": "Austin", "price_range": "cheap", "party_size": 3}
    assert strict_counts(pred, GOLD, ["city", "date"]) == (1, 2, 2)


def test_instance_scores_combine_the_parts() -> None:
    outcome = MPTEvalOutcome(
        challenge="recall",
        query_type="context-free",
        domain="Restaurants",
        predicted={"city": "Austin", "date": "2026-05-05", "price_range": "cheap"},
        gold={"name": "ReserveRestaurant", "arguments": GOLD},
        pref_slots=["price_range", "party_size"],
        focal_slots=["price_range"],
        open_slots=["city", "date"],
        valid=True,
        full_history_tokens=1500,
    )
    s = instance_scores(outcome, _allows, context_tokens=30)
    assert s["p_em"] == 0.0 and s["focal_em"] == 1.0
    assert (s["oa_tp"], s["oa_pred"], s["oa_gold"]) == (3, 3, 4)
    assert s["oa_f1"] == pytest.approx(2 * 3 / 7)
    assert (s["f1_tp"], s["f1_pred"], s["f1_gold"]) == (1, 1, 2)
    assert s["f1"] == pytest.approx(2 / 3)
    assert s["token_ratio"] == pytest.approx(0.02)


def test_no_call_scores_nothing_right() -> None:
    outcome = MPTEvalOutcome(
        challenge="recall",
        query_type="context-free",
        domain="Restaurants",
        predicted=None,
        gold={"name": "ReserveRestaurant", "arguments": GOLD},
        pref_slots=["price_range"],
        focal_slots=[],
        valid=False,
        full_history_tokens=1500,
    )
    s = instance_scores(outcome, _allows)
    assert s["function_ok"] == 0.0 and s["focal_em"] == 0.0
    assert s["p_em"] == 0.0 and s["oa_f1"] == 0.0 and s["valid"] == 0.0


def test_micro_f1_pools_counts_across_instances() -> None:
    rows = [{"oa_tp": 1, "oa_pred": 2, "oa_gold": 2}, {"oa_tp": 3, "oa_pred": 3, "oa_gold": 5}]
    assert micro_f1(rows, "oa") == pytest.approx(2 * 4 / 12)


def test_summarize_reports_means_and_token_ratio() -> None:
    rows = [
        {
            "p_em": 1.0,
            "oa_tp": 2,
            "oa_pred": 2,
            "oa_gold": 2,
            "f1_tp": 1,
            "f1_pred": 1,
            "f1_gold": 1,
            "token_ratio": 0.01,
            "valid": 1.0,
        },
        {
            "p_em": 0.0,
            "oa_tp": 0,
            "oa_pred": 1,
            "oa_gold": 1,
            "f1_tp": 0,
            "f1_pred": 1,
            "f1_gold": 1,
            "token_ratio": 0.03,
            "valid": 1.0,
        },
    ]
    s = summarize(rows, resamples=50)
    assert s["p_em"] == 0.5 and s["oa_f1"] == pytest.approx(4 / 6)
    assert s["f1"] == pytest.approx(0.5) and s["token_ratio"] == pytest.approx(0.02)


def test_token_count_is_a_char_approximation() -> None:
    assert count_tokens("") == 0 and count_tokens("abcd") == 1 and count_tokens("abcde") == 2


def test_ea_f1_counts_only_the_gold_calls_own_values_worked_example() -> None:
    # gold GetHotels(average_star in {1, 2}, location=Vallejo): the call's own value is 2
    gold = {"name": "GetHotels", "arguments": {"average_star": 2, "location": "Vallejo"}}
    allowed = {"average_star": [2, 1], "location": ["Vallejo"]}

    def outcome(name: str, predicted: dict[str, object]) -> MPTEvalOutcome:
        return MPTEvalOutcome(
            challenge="recall",
            query_type="context-guided",
            domain="Hotels",
            predicted=predicted,
            predicted_name=name,
            gold=gold,
            allowed=allowed,
            pref_slots=["average_star"],
            focal_slots=[],
            valid=True,
            full_history_tokens=100,
        )

    # another allowed star: OA counts it, EA does not; has_wifi is extra for both
    pred = {"average_star": 1, "location": "Vallejo", "has_wifi": True}
    s = instance_scores(outcome("GetHotels", pred), _allows)
    assert (s["oa_tp"], s["oa_pred"], s["oa_gold"]) == (2, 3, 2)
    assert (s["ea_tp"], s["ea_pred"], s["ea_gold"]) == (1, 3, 2)
    assert s["ea_f1"] == pytest.approx(2 * 1 / (3 + 2)) and s["oa_f1"] == pytest.approx(0.8)
    exact = instance_scores(
        outcome("GetHotels", {"average_star": 2, "location": "Vallejo"}), _allows
    )
    assert exact["ea_f1"] == 1.0
    wrong = instance_scores(outcome("GetMovies", {"average_star": 2}), _allows)
    assert (wrong["ea_tp"], wrong["ea_pred"], wrong["ea_gold"]) == (0, 1, 2)
    # pooled over the three instances: tp 1 + 2 + 0, predicted 3 + 2 + 1, gold 2 + 2 + 2
    assert summarize([s, exact, wrong], resamples=10)["ea_f1"] == pytest.approx(2 * 3 / 12)


def test_the_context_free_regime_reports_precision_and_recall() -> None:
    rows = [{"f1_tp": 1, "f1_pred": 2, "f1_gold": 4}, {"f1_tp": 2, "f1_pred": 2, "f1_gold": 2}]
    s = summarize(rows, resamples=10)
    assert (s["precision"], s["recall"]) == (pytest.approx(3 / 4), pytest.approx(3 / 6))
    assert s["f1"] == pytest.approx(2 * 3 / 10)
