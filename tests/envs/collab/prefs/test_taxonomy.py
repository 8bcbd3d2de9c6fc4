import random

import pytest

from rapport.envs.collab import CHECKERS, Preference, Taxonomy, TaxonomyError, load_taxonomy


def test_collab_has_twenty_preferences_in_six_categories() -> None:
    taxonomy = load_taxonomy("collab")
    assert len(taxonomy.preferences) >= 20
    assert taxonomy.categories() == [
        "elaborateness",
        "politeness",
        "reasoning",
        "guidance",
        "proactivity",
        "habits",
    ]


def test_every_preference_is_described_and_checkers_exist() -> None:
    for pref in load_taxonomy().preferences:
        assert pref.description and pref.enforcement and pref.name
        assert pref.checker is None or pref.checker in CHECKERS


def test_conflicts_are_symmetric() -> None:
    taxonomy = load_taxonomy()
    for pref in taxonomy.preferences:
        for other in pref.conflicts:
            assert pref.id in taxonomy.get(other).conflicts, (pref.id, other)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("direct", "narrative"),
        ("courteous", "blunt"),
        ("one_step_at_a_time", "whole_solution"),
        ("suggest_next_step", "no_unsolicited_suggestions"),
        ("max_three_sentences", "outline_first"),
        ("max_three_sentences", "multiple_approaches"),
        ("max_three_sentences", "section_headings"),
    ],
)
def test_opposites_are_incompatible(a: str, b: str) -> None:
    assert not load_taxonomy().compatible([a, b])


def test_sample_never_returns_conflicting_preferences() -> None:
    taxonomy = load_taxonomy()
    drawn: set[str] = set()
    for seed in range(500):
        prefs = taxonomy.sample(random.Random(seed), k=3)
        ids = [p.id for p in prefs]
        assert len(set(ids)) == 3
        assert taxonomy.compatible(ids)
        drawn.update(ids)
    assert drawn == {p.id for p in taxonomy.preferences}


def test_sample_is_deterministic_for_a_seed() -> None:
    taxonomy = load_taxonomy()
    first = [p.id for p in taxonomy.sample(random.Random(7))]
    assert first == [p.id for p in taxonomy.sample(random.Random(7))]


def test_get_unknown_raises() -> None:
    with pytest.raises(KeyError):
        load_taxonomy().get("nope")


def test_asymmetric_conflict_is_rejected() -> None:
    a = Preference(
        id="a", category="c", name="A", description="d", enforcement="e", conflicts=["b"]
    )
    b = Preference(id="b", category="c", name="B", description="d", enforcement="e")
    with pytest.raises(TaxonomyError, match="not symmetric"):
        Taxonomy([a, b])


def test_unknown_taxonomy_is_an_error() -> None:
    with pytest.raises(TaxonomyError):
        load_taxonomy("nonexistent")
