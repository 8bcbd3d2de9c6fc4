"""collab-ablation: five conditions over the same users and problems."""

from __future__ import annotations

from types import SimpleNamespace

from rapport.envs import Condition, conditions_for, create_benchmark
from rapport.envs.collab import CollabAblationBenchmark, EnforcementEvent, PreferenceVerdictEvent
from rapport.log import ExperimentConfig


def _bench(memory: list[str]) -> tuple[CollabAblationBenchmark, ExperimentConfig]:
    config = ExperimentConfig(benchmark="collab-ablation", memory=memory, users=1, sessions=2)
    bench = create_benchmark(config)
    assert isinstance(bench, CollabAblationBenchmark)
    return bench, config


def test_five_conditions_in_order() -> None:
    bench, config = _bench(["none"])
    conditions = conditions_for(bench, config)
    assert [(c.name, c.memory) for c in conditions] == [
        ("direct", "none"),
        ("multiturn_no_prefs", "none"),
        ("with_prefs", "none"),
        ("oracle", "oracle"),
        ("memory", "reflection"),
    ]
    assert conditions[0].settings["mode"] == "direct"
    assert conditions[1].settings["preferences"] is False


def test_memory_condition_takes_the_first_learned_memory() -> None:
    bench, config = _bench(["none", "oracle", "rag", "facts"])
    assert conditions_for(bench, config)[-1].memory == "rag"


async def test_direct_condition_has_no_user_simulation(kit: SimpleNamespace) -> None:
    user = kit.scripted_user("never used", [])
    h = kit.Harness(["40 km/h plus 20 gives 60.\nAnswer: 60"], user)
    bench, record = await h.run(
        condition=Condition(
            name="direct", memory="none", settings={"mode": "direct", "preferences": False}
        )
    )
    assert user.requests == []
    assert [t.speaker for t in record.turns] == ["user", "agent"]
    assert record.turns[0].text == kit.TRAIN.prompt()
    assert bench.score(record) == {"TS": 1.0, "UE": 0.0, "UE_pref": 0.0, "Len": 2.0}


async def test_user_without_preferences_never_enforces(kit: SimpleNamespace) -> None:
    user = kit.scripted_user("Train question.", [kit.reaction(satisfied=False, enforce=True)] * 2)
    prose = "The speed is 120 / 2 = 60 km/h."
    h = kit.Harness(lambda _r: prose, user)
    _bench, record = await h.run(
        max_turns=2,
        condition=Condition(
            name="multiturn_no_prefs", memory="none", settings={"preferences": False}
        ),
    )
    assert record.events_of(EnforcementEvent) == []
    assert record.events_of(PreferenceVerdictEvent) == []
