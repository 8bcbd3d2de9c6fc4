from rapport.envs.collab import checker_agreement, checker_cases, load_taxonomy


def test_every_checker_agrees_with_the_reference_cases() -> None:
    report = checker_agreement()
    wrong = [(r.pref, r.ok, r.text) for r in report.disagreeing]
    assert wrong == []
    assert report.agreeing == len(report.results)


def test_every_checkable_preference_has_four_cases_both_ways() -> None:
    taxonomy = load_taxonomy("collab")
    checkable = {p.id for p in taxonomy.preferences if p.checker is not None}
    cases = checker_cases()
    assert {c.pref for c in cases} == checkable
    for pref in checkable:
        mine = [c for c in cases if c.pref == pref]
        assert len(mine) >= 4, pref
        assert any(c.ok for c in mine) and any(not c.ok for c in mine), pref


def test_per_preference_counts_add_up() -> None:
    report = checker_agreement()
    counts = report.per_preference()
    assert sum(n for n, _ in counts.values()) == len(report.results)
