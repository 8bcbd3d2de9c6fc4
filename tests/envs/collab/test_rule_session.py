"""A collab session played by the rule user: no user-model call, code decides all."""

from __future__ import annotations

from types import SimpleNamespace

from rapport.envs.collab import CollabBenchmark, DraftUpdateEvent, EnforcementEvent, load_taxonomy
from rapport.log import ExperimentConfig

PROSE = "The train covers 120 km in 2 hours, so its speed is 120 / 2 = 60 km/h."
FIXED = "- Distance: 120 km\n- Time: 2 hours\n- So the speed is 120 / 2 = 60 km/h."


async def test_rule_user_enforces_then_stops_with_the_stated_answer(kit: SimpleNamespace) -> None:
    user_model = kit.scripted_user("never used", [])
    h = kit.Harness([PROSE, FIXED], user_model)
    user = kit.make_user(("bullet_points", "no_unsolicited_suggestions", "direct"))
    bench, record = await h.run(user=user, user_kind="rules")

    assert record.status == "ok"
    assert h.user_api.requests == []
    assert kit.TRAIN.question in record.turns[0].text
    assert [e.preference_id for e in record.events_of(EnforcementEvent)] == ["bullet_points"]
    assert record.events_of(DraftUpdateEvent)[0].draft.startswith("60")
    assert record.outcome.draft.startswith("60")
    assert bench.score(record)["TS"] == 1.0
    assert [t.speaker for t in record.turns] == ["user", "agent"] * 2 + ["user"]


async def test_rule_users_hold_checkable_preferences_from_three_categories() -> None:
    config = ExperimentConfig(
        benchmark="collab",
        memory=["none"],
        users=20,
        sessions=1,
        options={"problems": "generated", "user": "rules"},
    )
    bench = CollabBenchmark.from_config(config)
    taxonomy = load_taxonomy("collab")
    for user in bench.users(20, seed=3):
        prefs = user.preferences
        assert all(taxonomy.get(p).checker for p in prefs)
        assert len({taxonomy.get(p).category for p in prefs}) == 3


def test_train_and_eval_users_are_disjoint() -> None:
    def users(split: str) -> list[str]:
        config = ExperimentConfig(
            benchmark="collab",
            memory=["none"],
            users=5,
            sessions=1,
            options={"problems": "generated", "split": split},
        )
        return [u.model_dump_json() for u in CollabBenchmark.from_config(config).users(5, 0)]

    assert not set(users("train")) & set(users("eval"))


async def test_the_report_counts_code_guards_and_draft_disagreement(kit: SimpleNamespace) -> None:
    from rapport.envs.collab._agreement import guard_table

    user_model = kit.scripted_user("never used", [])
    h = kit.Harness([PROSE, FIXED], user_model)
    user = kit.make_user(("bullet_points", "no_unsolicited_suggestions", "direct"))
    _bench, record = await h.run(user=user, user_kind="rules")
    table = guard_table([record])
    assert table.rows == [["none", 3, 0, 1, 0.0]]
    unanswered = record.model_copy(
        update={"turns": [t for t in record.turns if t.speaker != "agent"]}
    )
    assert guard_table([unanswered]).rows == [["none", 3, 0, 0, None]]  # "-", not nan


async def test_the_demo_finds_a_preference_followed_after_an_earlier_request(
    kit: SimpleNamespace,
) -> None:
    from rapport.cli._demo_collab import learned_excerpt

    user = kit.make_user(("bullet_points", "no_unsolicited_suggestions", "direct"))
    first = await kit.Harness([PROSE, FIXED], kit.scripted_user("x", [])).run(
        user=user, user_kind="rules"
    )
    later = await kit.Harness([FIXED], kit.scripted_user("x", [])).run(user=user, user_kind="rules")
    early, late = first[1], later[1]
    early.condition = late.condition = "reflection"
    late.index = 1
    text = learned_excerpt([early, late])
    assert "session 1 the user asked" in text and "session 2" in text
    assert "bullet_points" in text and "Distance" in text
