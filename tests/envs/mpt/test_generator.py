"""The generated benchmark: determinism, challenge labels, valid gold calls, drift."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.envs.mpt import (
    CHALLENGES,
    GenerationSettings,
    domain_schema,
    domains,
    generate_users,
    validate_call,
)
from rapport.envs.mpt._generate import evidence
from rapport.envs.mpt._schema import load_data


def _digest(users: list[dict]) -> str:
    return hashlib.sha256(json.dumps(users, sort_keys=True).encode()).hexdigest()


def test_same_seed_gives_the_same_bytes_and_another_seed_differs() -> None:
    assert _digest(generate_users(30, 7)) == _digest(generate_users(30, 7))
    assert _digest(generate_users(30, 7)) != _digest(generate_users(30, 8))


def test_the_catalogue_meets_the_spec() -> None:
    data = load_data()
    assert len(domains()) >= 12
    assert len(data["groups"]) >= 8
    for name in domains():
        assert 3 <= len(domain_schema(name).args) <= 8, name
    owners: dict[str, str] = {}
    for group, spec in data["groups"].items():
        for option in spec["options"].values():
            for key, value in option["values"].items():
                assert owners.setdefault(key, group) == group, f"{key} in two groups"
                dom, arg = key.split(".")
                assert domain_schema(dom).args[arg].allows(value), key


USERS = generate_users(120, 3)


def test_users_hold_two_to_four_preferences_and_five_to_ten_sessions() -> None:
    for user in USERS:
        assert 2 <= len(user["prefs"]) <= 4
        assert 5 <= len(user["history"]) <= 10
    assert any(not s["revealed"] for u in USERS for s in u["history"])


def test_recall_instances_have_same_domain_evidence() -> None:
    recall = [(u, i) for u in USERS for i in u["instances"] if i["challenge"] == "recall"]
    assert recall
    for user, inst in recall:
        shown = evidence(user["history"], inst["focal_group"])
        assert any(d == inst["domain"] for _, d, _ in shown)


def test_transfer_instances_have_no_same_domain_session() -> None:
    transfer = [(u, i) for u in USERS for i in u["instances"] if i["challenge"] == "transfer"]
    assert transfer
    assert any(i["variant"] for _, i in transfer)
    for user, inst in transfer:
        assert all(s["domain"] != inst["domain"] for s in user["history"])
        assert evidence(user["history"], inst["focal_group"])


def test_induction_instances_have_evidence_only_elsewhere() -> None:
    induction = [(u, i) for u in USERS for i in u["instances"] if i["challenge"] == "induction"]
    assert induction
    for user, inst in induction:
        shown = evidence(user["history"], inst["focal_group"])
        assert shown and all(d != inst["domain"] for _, d, _ in shown)
        assert any(s["domain"] == inst["domain"] for s in user["history"])


def test_every_gold_and_history_call_is_schema_valid() -> None:
    for user in USERS:
        for session in user["history"]:
            schema = domain_schema(session["domain"])
            call = session["call"]
            assert validate_call(schema, call["name"], call["arguments"]) == []
        for inst in user["instances"]:
            schema = domain_schema(inst["domain"], inst["variant"])
            gold = inst["gold"]
            assert validate_call(schema, gold["name"], gold["arguments"]) == []
            assert set(inst["pref_slots"]) <= set(gold["arguments"])
            assert inst["challenge"] in CHALLENGES


def test_context_free_queries_leave_the_constraints_open() -> None:
    for user in USERS:
        for inst in user["instances"]:
            required = set(domain_schema(inst["domain"], inst["variant"]).required())
            opened = set(inst["open_slots"])
            assert opened == (required if inst["query_type"] == "context-free" else set())


def test_drifted_users_are_scored_on_their_latest_behaviour() -> None:
    users = generate_users(150, 5, GenerationSettings(drift=1.0))
    drifted = [u for u in users if u["drift"]]
    assert len(drifted) > 30
    for user in drifted:
        d = user["drift"]
        shown = evidence(user["history"], d["group"])
        assert any(i < d["at"] and o == d["before"] for i, _, o in shown)
        assert shown[-1][2] == d["after"] == user["prefs"][d["group"]]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), low=st.integers(1, 6), extra=st.integers(0, 4))
def test_history_length_follows_the_settings(seed: int, low: int, extra: int) -> None:
    cfg = GenerationSettings(sessions_min=low, sessions_max=low + extra)
    for user in generate_users(3, seed, cfg):
        assert low <= len(user["history"]) <= low + extra
