"""MPT's typed tasks and outcomes: every key the generator and the release builder write has a
field, and an outcome stored as plain JSON reads back unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rapport.envs.mpt import (
    Call,
    GenerationSettings,
    MPTEvalOutcome,
    MPTHistorySession,
    MPTInstance,
    generate_users,
    load_release,
)
from rapport.log import SessionRecord

from .release_fixture import write_release

# An eval session's outcome as stores wrote it when these fields were plain JSON objects.
STORED = {
    "kind": "mpt_eval",
    "challenge": "transfer",
    "query_type": "multi-turn",
    "domain": "GetHotels",
    "variant": False,
    "api_schema": {
        "name": "GetHotels",
        "description": "Find a hotel.",
        "required": ["location"],
        "arguments": {"average_star": {"kind": "text", "values": [1, 2], "description": "s"}},
    },
    "predicted": {"location": "Vallejo", "average_star": 2, "rooms": None, "pets": True},
    "predicted_name": "GetHotels",
    "valid": True,
    "gold": {"name": "GetHotels", "arguments": {"location": "Vallejo", "average_star": 1.5}},
    "allowed": {"location": ["Vallejo"], "average_star": [1, "2", 2.5, False, None]},
    "pref_slots": ["average_star"],
    "pref_map": {"GetHotels": ["average_star"]},
    "difficulty": "hard",
    "focal_slots": [],
    "open_slots": [],
    "history_sessions": 7,
    "full_history_tokens": 1234,
    "token_method": "approx: ceil(characters / 4)",
}


def _record(outcome: dict[str, Any]) -> str:
    return json.dumps(
        {"condition": "rag", "user_id": "u", "index": 7, "spec_id": "u-e0", "outcome": outcome}
    )


def test_a_stored_outcome_reads_back_typed_and_dumps_the_same_json() -> None:
    record = SessionRecord.model_validate_json(_record(STORED))
    outcome = record.outcome
    assert isinstance(outcome, MPTEvalOutcome)
    assert outcome.gold == Call(
        name="GetHotels", arguments={"location": "Vallejo", "average_star": 1.5}
    )
    assert outcome.gold.name == "GetHotels"
    dumped = json.loads(record.model_dump_json())["outcome"]
    assert {k: dumped[k] for k in STORED} == STORED
    assert dumped["context_tokens"] is None  # a field newer than the stored outcome


def test_a_call_holds_json_values_only() -> None:
    with pytest.raises(ValidationError):
        Call(name="F", arguments={"when": object()})


def _keys(model: type[Any]) -> set[str]:
    return {f.alias or name for name, f in model.model_fields.items()}


def test_every_key_the_generator_writes_is_a_field() -> None:
    users = generate_users(6, 3, GenerationSettings(per_cell=2))
    sessions = [s for u in users for s in u["history"]]
    instances = [i for u in users for i in u["instances"]]
    assert sessions and instances
    assert set().union(*sessions) <= _keys(MPTHistorySession)
    assert set().union(*instances) <= _keys(MPTInstance)
    for raw in instances:
        instance = MPTInstance.model_validate(raw)
        dumped = instance.model_dump(by_alias=True, include=set(raw))
        assert dumped == raw
    for raw in sessions:
        assert MPTHistorySession.model_validate(raw).model_dump(include=set(raw)) == raw


def test_every_key_the_release_builder_writes_is_a_field(tmp_path: Path) -> None:
    users = load_release(write_release(tmp_path), "tiny-v1")
    sessions = [s for u in users for s in u["history"]]
    instances = [i for u in users for i in u["instances"]]
    assert sessions and instances
    assert set().union(*sessions) <= _keys(MPTHistorySession)
    assert set().union(*instances) <= _keys(MPTInstance)
    for raw in instances:
        assert MPTInstance.model_validate(raw).model_dump(include=set(raw)) == raw
    for raw in sessions:
        assert MPTHistorySession.model_validate(raw).model_dump(include=set(raw)) == raw


def test_an_instance_with_an_unknown_key_is_refused() -> None:
    raw = {
        "id": "i",
        "challenge": "recall",
        "query_type": "single-turn",
        "domain": "GetHotels",
        "dialogue": [{"role": "user", "text": "a hotel"}],
        "gold": {"name": "GetHotels", "arguments": {}},
        "golden": {},
    }
    with pytest.raises(ValidationError, match="golden"):
        MPTInstance.model_validate(raw)
