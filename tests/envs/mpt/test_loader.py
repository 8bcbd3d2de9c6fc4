"""The official-format loader, on a fixture written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.envs.mpt import CallParseError, MPTBenchmark, MPTOptions, load_official, parse_call

EXAMPLE = {
    "example_id": "ex-1",
    "sessions": [
        {
            "dialogue_id": "1_00001",
            "preference_utterance": "Something cheap please.",
            "explicit_constraints": {"city": "San Jose"},
            "api_call": ['FindRestaurants(city="San Jose", price_range="cheap")'],
            "dialogue": [
                {
                    "role": "User",
                    "message": "Find me a cheap place in San Jose.",
                    "service": ["Restaurants_1"],
                },
                {"role": "Assistant", "message": "How about Blue Fern?"},
            ],
            "deprecated_api_call": [],
        },
        {
            "dialogue_id": "2_00002",
            "preference_utterance": "",
            "explicit_constraints": {},
            "api_call": ["ReserveCar(pickup_city='Austin', car_type='Compact', days=3)"],
            "dialogue": [{"role": "User", "message": "A small car in Austin."}],
            "deprecated_api_call": [],
        },
    ],
    "query": "Book a table in Fremont for tonight.",
    "gold_api_call": ['FindRestaurants(city="Fremont", price_range="cheap")'],
    "challenge": "recall",
}


def test_parse_call_reads_keyword_literals() -> None:
    call = parse_call('Func(a="v", n=2, ok=True, xs=[1, 2])')
    assert call == {"name": "Func", "arguments": {"a": "v", "n": 2, "ok": True, "xs": [1, 2]}}


@pytest.mark.parametrize(
    "text",
    [
        '__import__("os").system("x")',
        'Func(a=open("f"))',
        "Func(1)",
        "Func(**k)",
        "1 + 2",
        "Func(",
    ],
)
def test_parse_call_rejects_anything_but_literal_keywords(text: str) -> None:
    with pytest.raises(CallParseError):
        parse_call(text)


def test_load_official_builds_users_and_instances(tmp_path: Path) -> None:
    path = tmp_path / "mpt.json"
    path.write_text(json.dumps([EXAMPLE]))
    [user] = load_official(path)
    assert [s["domain"] for s in user["history"]] == ["Restaurants_1", "ReserveCar"]
    assert user["history"][1]["call"]["arguments"]["days"] == 3
    [inst] = user["instances"]
    assert inst["challenge"] == "recall"
    assert inst["gold"]["arguments"] == {"city": "Fremont", "price_range": "cheap"}
    assert inst["pref_slots"] == ["price_range"]  # Fremont is stated in the query


def test_the_benchmark_runs_on_a_loaded_file(tmp_path: Path) -> None:
    path = tmp_path / "mpt.json"
    path.write_text(json.dumps([EXAMPLE, {**EXAMPLE, "example_id": "ex-2"}]))
    bench = MPTBenchmark(MPTOptions(path=str(path)))
    users = bench.users(1, 0)
    specs = bench.sessions(users[0], 1, 0)
    assert [s.split for s in specs] == ["train", "train", "eval"]


def test_a_malformed_file_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match="JSON list"):
        load_official(path)
