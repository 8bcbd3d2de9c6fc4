"""A tiny release written here in the PRefine release's layout (our own content, not its data).

Two examples; the expected counts below are worked out by hand from the release's rules:
ex-1 recalls ``price_range`` (easy), shows ``low_cost`` evidence in GetRestaurants (medium) and
so transfers to GetRentalCars and GetHotels (hard; GetHotels allows two stars); ex-2 has a call
with a duplicated keyword (an error, skipped) and a GetRentalCars call (easy, single-turn only:
GetRentalCars has no multi-turn template).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PREF_LIST = {
    "GetRestaurants": ["price_range", "number_of_seats"],
    "GetRentalCars": ["car_type"],
    "GetHotels": ["average_star"],
}
PREF_GROUP = {
    "low_cost": {
        "group_preference": "budget_conscious",
        "rules": [
            {"domain": "GetRestaurants", "slot": "price_range", "value": "cheap"},
            {"domain": "GetRentalCars", "slot": "car_type", "value": "Compact"},
            {"domain": "GetHotels", "slot": "average_star", "value": 1},
            {"domain": "GetHotels", "slot": "average_star", "value": 2},
        ],
    }
}
QUERY_SINGLE = {
    "GetRestaurants": "Find me somewhere to eat.",
    "GetRentalCars": "I need a car for the weekend.",
    "GetHotels": "Find me a hotel.",
}
QUERY_MULTI = [
    {
        "query_id": "GetRestaurants_price_range",
        "query": [
            {"role": "User", "message": "I want dinner out."},
            {"role": "Assistant", "message": "Which city and day?"},
            {"role": "User", "message": "Fremont, March 5th."},
        ],
        "api_call": ['GetRestaurants(city="Fremont", date="2019-03-05")'],
        "target": [{"domain": "GetRestaurants", "slot": "price_range", "value": ["cheap"]}],
    },
    {
        "query_id": "GetHotels_average_star",
        "query": [
            {"role": "User", "message": "I need a room."},
            {"role": "Assistant", "message": "Where?"},
            {"role": "User", "message": "Vallejo."},
        ],
        "api_call": ['GetHotels(location="Vallejo")'],
        "target": [{"domain": "GetHotels", "slot": "average_star", "value": ["1", "2"]}],
    },
]


def _function(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} by the user's preferences.",
            "parameters": {"type": "object", "properties": props, "required": []},
        },
    }


TEXT = {"type": "string"}
SCHEMA_SINGLE = [
    _function(
        "GetRestaurants",
        {
            "price_range": {"type": "string", "enum": ["cheap", "moderate", "pricey"]},
            "number_of_seats": TEXT,
        },
    ),
    _function("GetRentalCars", {"car_type": {"type": "string", "enum": ["Compact", "Standard"]}}),
    _function("GetHotels", {"average_star": TEXT}),
]
SCHEMA_MULTI = [
    _function(
        "GetRestaurants",
        {
            "price_range": {"type": "string", "enum": ["cheap", "moderate", "pricey"]},
            "number_of_seats": TEXT,
            "city": TEXT,
            "date": TEXT,
        },
    ),
    _function("GetRentalCars", {"car_type": {"type": "string", "enum": ["Compact", "Standard"]}}),
    _function("GetHotels", {"average_star": TEXT, "location": TEXT}),
]
EXAMPLES = [
    {
        "example_id": "ex-1",
        "sessions": [
            {
                "dialogue_id": "d-1",
                "preference_utterance": [],
                "api_call": ['GetRestaurants(city="San Jose", price_range="cheap")'],
                "dialogue": [
                    {"role": "User", "message": "A cheap place in San Jose, please."},
                    {
                        "role": "Assistant",
                        "message": "Booked Blue Fern.",
                        "service": ['GetRestaurants(city="San Jose", price_range="cheap")'],
                    },
                ],
            },
            {
                "dialogue_id": "d-2",
                "preference_utterance": [],
                "api_call": [],
                "dialogue": [{"role": "User", "message": "Good morning."}],
            },
        ],
        "api_calls": ['GetRestaurants(price_range="cheap")', 'GetWeather(city="San Jose")'],
        "api_calls_pref": [
            {
                "value_group": "low_cost",
                "group_preference": "budget_conscious",
                "count": 1,
                "evidence": [
                    {
                        "domain": "GetRestaurants",
                        "slot": "price_range",
                        "values": [
                            {"value": "cheap", "meta": {"count": 1, "dialogue_ids": ["d-1"]}}
                        ],
                    }
                ],
            }
        ],
    },
    {
        "example_id": "ex-2",
        "sessions": [
            {
                "dialogue_id": "d-3",
                "preference_utterance": [],
                "api_call": ['GetRentalCars(car_type="Compact")'],
                "dialogue": [{"role": "User", "message": "A compact car."}],
            }
        ],
        "api_calls": [
            'GetRestaurants(price_range="cheap", price_range="pricey")',
            'GetRentalCars(car_type="Compact")',
        ],
        "api_calls_pref": [],
    },
]
EXPECTED = {
    "singleturn.easy": 2,
    "singleturn.medium": 1,
    "singleturn.hard": 2,
    "multiturn.easy": 1,
    "multiturn.medium": 1,
    "multiturn.hard": 1,
}


def _write(path: Path, value: Any) -> dict[str, Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(value, indent=2).encode("utf-8")
    path.write_bytes(payload)
    return {"expected_bytes": len(payload), "expected_sha256": hashlib.sha256(payload).hexdigest()}


def write_release(root: Path, examples: list[dict[str, Any]] | None = None) -> Path:
    """Write the tiny release under ``root`` (dataset ``tiny-v1``) and return ``root``."""
    rows = EXAMPLES if examples is None else examples
    inputs = {
        "queries": {
            "singleturn": ("configs/queries/tiny-v1/query_singleturn.json", QUERY_SINGLE),
            "multiturn": ("configs/queries/tiny-v1/query_multiturn.json", QUERY_MULTI),
        },
        "preferences": {
            "pref_list": ("configs/preferences/tiny-v1/pref_list.json", PREF_LIST),
            "pref_group": ("configs/preferences/tiny-v1/pref_group.json", PREF_GROUP),
        },
        "schemas": {
            "singleturn": ("configs/schemas/tiny-v1/schema_easy.json", SCHEMA_SINGLE),
            "multiturn": ("configs/schemas/tiny-v1/schema_all.json", SCHEMA_MULTI),
        },
    }
    for part, files in inputs.items():
        specs = {
            name: {"path": rel, **_write(root / rel, value)} for name, (rel, value) in files.items()
        }
        _write(root / f"configs/{part}/tiny-v1.json", {"config_version": 1, "inputs": specs})
    source = _write(root / "data/tiny.json", rows)
    _write(
        root / "configs/datasets/tiny-v1.json",
        {
            "config_version": 1,
            "dataset_id": "tiny-v1",
            "source": {"default_path": "data/tiny.json", **source},
            "queries_config": "configs/queries/tiny-v1.json",
            "preferences_config": "configs/preferences/tiny-v1.json",
            "schemas_config": "configs/schemas/tiny-v1.json",
            "turns": ["singleturn", "multiturn"],
            "difficulties": ["easy", "medium", "hard"],
            "expected": {
                "source_example_count": 2,
                "total_instances": sum(EXPECTED.values()),
                "scenarios": {k: {"count": v} for k, v in EXPECTED.items()},
            },
        },
    )
    return root
