"""Aggregation: per user first, then over users; bootstrap CIs; paired deltas by session."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.eval import (
    bootstrap_ci,
    condition_metrics,
    error_counts,
    pick_baseline,
    session_deltas,
    summarize,
)
from rapport.log import ErrorEvent, SessionRecord

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _rec(
    user: str, index: int, value: float, condition: str = "none", **kw: object
) -> SessionRecord:
    return SessionRecord.model_validate(
        {
            "condition": condition,
            "user_id": user,
            "index": index,
            "spec_id": f"{user}-{index}",
            "scores": {"m": value},
            **kw,
        }
    )


@given(value=finite, sessions=st.lists(st.integers(1, 5), min_size=1, max_size=8))
@settings(max_examples=50, deadline=None)
def test_a_constant_metric_has_a_zero_width_interval_at_that_value(
    value: float, sessions: list[int]
) -> None:
    records = [_rec(f"u{u}", i, value) for u, n in enumerate(sessions) for i in range(n)]
    est = summarize(records, "m")
    assert est is not None
    assert est.mean == est.ci_low == est.ci_high == value


@given(values=st.lists(finite, min_size=1, max_size=12), data=st.data())
@settings(max_examples=50, deadline=None)
def test_permuting_users_leaves_the_mean_unchanged(
    values: list[float], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(range(len(values))))
    records = [_rec(f"u{i}", 0, v) for i, v in enumerate(values)]
    shuffled = [_rec(f"u{i}", 0, values[j]) for i, j in enumerate(order)]
    a, b = summarize(records, "m"), summarize(shuffled, "m")
    assert a is not None and b is not None
    assert abs(a.mean - b.mean) <= 1e-9 * max(1.0, *(abs(v) for v in values))


@given(values=st.lists(finite, min_size=1, max_size=30), seed=st.integers(0, 1000))
@settings(max_examples=50, deadline=None)
def test_the_interval_contains_the_mean(values: list[float], seed: int) -> None:
    est = bootstrap_ci(values, seed=seed)
    assert est.ci_low <= est.mean <= est.ci_high


def test_the_bootstrap_is_reproducible_from_its_seed() -> None:
    values = [0.1, 0.5, 0.9, 0.3, 0.7]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    est = bootstrap_ci(values, seed=3)
    assert est.ci_low < est.mean < est.ci_high


def test_users_weigh_equally_whatever_their_session_count() -> None:
    # u0 has four sessions scoring 1, u1 one session scoring 0: per user 1 and 0 -> 0.5;
    # pooling the five sessions would give 0.8.
    records = [_rec("u0", i, 1.0) for i in range(4)] + [_rec("u1", 0, 0.0)]
    est = summarize(records, "m")
    assert est is not None and est.mean == 0.5


def test_train_sessions_are_not_reported() -> None:
    records = [_rec("u0", 0, 100.0, split="train"), _rec("u0", 1, 1.0)]
    table = condition_metrics(records)
    assert table["none"]["m"].mean == 1.0


def test_deltas_by_session_pair_each_user_with_the_baseline() -> None:
    records = []
    for user, gain in (("u0", 1.0), ("u1", 3.0)):
        for index in range(3):
            records.append(_rec(user, index, 10.0))
            records.append(_rec(user, index, 10.0 + gain * index, condition="notes"))
    deltas = session_deltas(records, "m", "none")
    assert [p.index for p in deltas["notes"]] == [0, 1, 2]
    assert [p.mean for p in deltas["notes"]] == [0.0, 2.0, 4.0]
    assert all(p.users == 2 for p in deltas["notes"])
    assert deltas["notes"][2].ci_low <= 4.0 <= deltas["notes"][2].ci_high


def test_baseline_is_none_when_present_else_the_first_condition() -> None:
    assert pick_baseline(["reflection", "none"]) == "none"
    assert pick_baseline(["a", "b"]) == "a"
    assert pick_baseline([]) is None


def test_error_counts_count_error_events_per_condition() -> None:
    bad = _rec("u0", 0, 0.0, events=[ErrorEvent(where="agent", message="x")])
    assert error_counts([bad, _rec("u1", 0, 1.0)]) == {"none": 1}
