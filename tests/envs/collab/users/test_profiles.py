"""Collab user profiles: reproducible, three compatible preferences each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.envs import UserSpec
from rapport.envs.collab import (
    Persona,
    PersonaFileError,
    as_collab_user,
    load_msc_profiles,
    load_taxonomy,
    make_users,
)

MSC = Path(__file__).parents[1] / "data/msc_layout/user_profiles.json"
"""Our profiles in the layout of MSC's published ``user_profiles.json`` (see its README.md)."""


def test_one_hundred_users_are_reproducible_byte_for_byte() -> None:
    first = [u.model_dump_json() for u in make_users(100, seed=11)]
    again = [u.model_dump_json() for u in make_users(100, seed=11)]
    assert first == again
    assert len(set(first)) == 100
    assert first != [u.model_dump_json() for u in make_users(100, seed=12)]


def test_a_smaller_run_is_a_prefix_of_a_larger_one() -> None:
    assert make_users(5, seed=2) == make_users(20, seed=2)[:5]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_each_user_holds_three_compatible_preferences(seed: int) -> None:
    taxonomy = load_taxonomy("collab")
    for user in make_users(5, seed):
        assert len(user.preferences) == len(set(user.preferences)) == 3
        assert taxonomy.compatible(user.preferences)


def test_truth_lists_the_preference_criteria() -> None:
    user = make_users(1, seed=0)[0]
    truth = user.truth()
    for pref in user.preference_objects():
        assert pref.name in truth and " ".join(pref.enforcement.split()) in truth


def test_loaded_personas_are_used() -> None:
    personas = [Persona(description="A beekeeper."), Persona(description="A pilot.")]
    users = make_users(10, seed=1, personas=personas)
    assert {u.persona for u in users} <= {"A beekeeper.", "A pilot."}


def test_a_plain_user_spec_becomes_a_collab_user() -> None:
    spec = UserSpec(id="u", persona="A chef.", preferences=["blunt"])
    user = as_collab_user(spec)
    assert user.profile.description == "A chef."
    assert [p.id for p in user.preference_objects()] == ["blunt"]


def test_msc_phrases_map_one_to_one_onto_the_taxonomy() -> None:
    from rapport.envs.collab import MSC_PHRASES, load_taxonomy

    ids = [pref_id for _phrase, pref_id in MSC_PHRASES]
    assert sorted(ids) == sorted(p.id for p in load_taxonomy("collab").preferences)


def test_users_hold_three_categories_and_train_users_differ() -> None:
    from rapport.envs.collab import load_taxonomy

    taxonomy = load_taxonomy("collab")
    users = make_users(50, seed=4)
    for user in users:
        assert len({taxonomy.get(p).category for p in user.preferences}) == 3
    train = make_users(50, seed=4, split="train")
    assert {u.id for u in train}.isdisjoint({u.id for u in users})
    habits = sum(taxonomy.get(p).category == "habits" for u in users for p in u.preferences)
    assert habits <= 50  # at most one per user


def test_profiles_in_msc_layout_load_in_file_order() -> None:
    """Profiles in the layout of MSC's ``user_profiles.json``: ids from ``i``, preferences
    mapped by phrase, the persona's non-ASCII escapes read as text."""
    users = load_msc_profiles(MSC)
    assert [(u.id, u.preferences) for u in users] == [
        ("msc-000", ["blunt", "suggest_next_step", "numbered_steps"]),
        ("msc-001", ["direct", "big_picture_first", "tldr_end"]),
        ("msc-002", ["narrative", "one_step_at_a_time", "confidence_estimate"]),
    ]
    assert users[0].persona.startswith("A night-shift baker")
    assert "Troms\u00f8" in users[1].persona and "harbour-master\u2019s" in users[1].persona
    rows = json.loads(MSC.read_text())
    assert [u.preference_texts for u in users] == [row["preferences"] for row in rows]


def _first_profile(**changes: Any) -> list[dict[str, Any]]:
    return [{**json.loads(MSC.read_text())[0], **changes}]


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        (_first_profile(i=None), "'i' must be a whole number"),
        (_first_profile(i="abc"), "'i' must be a whole number"),
        (_first_profile(i=1.5), "'i' must be a whole number"),
        (_first_profile(i=-1), "'i' must be a whole number"),
        (_first_profile(i=[0]), "'i' must be a whole number"),
        (_first_profile(persona={"a": 1}), "'persona' must be text"),
        (_first_profile() * 2, "profile 1 repeats the user id msc-000"),
        # A list holding the phrase, or no preference at all, is not a profile of three.
        (_first_profile(preferences=[["You like bullet-point format."]]), "must be text"),
        (_first_profile(preferences=[3]), "must be text"),
        (_first_profile(preferences=[]), "'preferences' list is empty"),
    ],
)
def test_bad_profiles_name_the_file_and_profile(
    tmp_path: Path, profiles: list[dict[str, Any]], message: str
) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(profiles))
    with pytest.raises(PersonaFileError, match=message) as info:
        load_msc_profiles(path)
    assert "profiles.json" in str(info.value)


def test_an_integer_too_long_to_read_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(_first_profile(i=0)).replace('"i": 0', '"i": ' + "9" * 5000))
    with pytest.raises(PersonaFileError, match=r"cannot read profile file .*profiles\.json"):
        load_msc_profiles(path)


@pytest.mark.parametrize("number", ["Infinity", "NaN", "1e400"])
def test_a_non_finite_profile_index_is_refused(tmp_path: Path, number: str) -> None:
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(_first_profile(i=0)).replace('"i": 0', f'"i": {number}'))
    with pytest.raises(PersonaFileError, match="'i' must be a whole number"):
        load_msc_profiles(path)


def test_a_preference_text_given_twice_is_one_preference(tmp_path: Path) -> None:
    first = _first_profile()[0]
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps([{**first, "preferences": first["preferences"][:1] * 2}]))
    (user,) = load_msc_profiles(path)
    assert len(user.preferences) == 1


def test_profiles_with_a_byte_order_mark_load(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    path.write_text("\ufeff" + MSC.read_text(), encoding="utf-8")
    assert [u.id for u in load_msc_profiles(path)] == [u.id for u in load_msc_profiles(MSC)]
