"""The collab benchmark's construction, users, sessions and scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from rapport.envs import BENCHMARKS, create_benchmark
from rapport.envs.collab import (
    CollabBenchmark,
    CollabOutcome,
    CollabTask,
    DraftUpdateEvent,
    EnforcementEvent,
    Problem,
)
from rapport.log import ExperimentConfig, SessionRecord, Turn


def _config(**options: object) -> ExperimentConfig:
    return ExperimentConfig(
        benchmark="collab", users=3, sessions=4, seed=5, max_turns=4, options=dict(options)
    )


def test_collab_is_registered_and_built_from_config() -> None:
    bench = create_benchmark(_config())
    assert isinstance(bench, CollabBenchmark)
    assert BENCHMARKS["collab"].endswith(":CollabBenchmark")
    assert bench.max_turns == 4 and len(bench.pool) == 12
    assert bench.metrics == ("TS", "UE", "UE_pref", "Len")
    assert bench.lower_is_better == {"UE", "UE_pref", "Len"}


def test_unknown_option_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError, match="problemz"):
        create_benchmark(_config(problemz="math500"))


def test_sessions_are_deterministic_and_differ_between_users() -> None:
    bench = create_benchmark(_config())
    again = create_benchmark(_config())
    users = bench.users(3, seed=5)
    per_user = [[s.id for s in bench.sessions(u, 4, seed=5)] for u in users]
    assert per_user == [[s.id for s in again.sessions(u, 4, seed=5)] for u in users]
    flat = [pid for ids in per_user for pid in ids]
    assert len(set(flat)) == 12  # users x sessions problems, none repeated
    spec = bench.sessions(users[0], 4, seed=5)[2]
    assert spec.index == 2 and spec.user_id == users[0].id
    assert spec.task_as(CollabTask).problem.id == spec.id


def test_persona_file_option_feeds_the_users(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"persona": "A lighthouse keeper."}\n')
    bench = create_benchmark(_config(personas=str(path)))
    assert {u.persona for u in bench.users(3, seed=0)} == {"A lighthouse keeper."}


def test_preference_pool_option_limits_every_users_draw() -> None:
    pool = "direct,blunt,tldr_end,bullet_points,key_takeaways"
    bench = create_benchmark(_config(preferences=pool, user="rules"))
    users = bench.users(12, seed=3)
    held = {p for u in users for p in u.preferences}
    assert held <= set(pool.split(","))
    assert all(len(u.preferences) == 3 for u in users)
    # The same pool from YAML (a list) gives the same users; no pool gives others.
    as_list = create_benchmark(_config(preferences=pool.split(","), user="rules"))
    assert [u.preferences for u in as_list.users(12, seed=3)] == [u.preferences for u in users]
    unrestricted = create_benchmark(_config(user="rules")).users(12, seed=3)
    assert {p for u in unrestricted for p in u.preferences} - set(pool.split(","))


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ("direct,telepathy", "unknown preference ids: telepathy"),
        ("direct,narrative,courteous", "cannot draw 3 compatible preferences"),
        ("direct,courteous,tldr_end", ""),  # three categories: a valid pool
    ],
)
def test_a_pool_that_cannot_give_three_categories_is_refused(pool: str, message: str) -> None:
    if not message:
        assert create_benchmark(_config(preferences=pool)).users(2, seed=0)
        return
    with pytest.raises(pydantic.ValidationError, match=message):
        create_benchmark(_config(preferences=pool))


def test_score_reads_the_final_draft_enforcements_and_messages() -> None:
    problem = Problem(id="p", source="t", kind="math", question="2+3?", answer="5")
    bench = CollabBenchmark([problem])
    record = SessionRecord(
        condition="none",
        user_id="u",
        index=0,
        spec_id="p",
        turns=[Turn(index=i, speaker="user" if i % 2 == 0 else "agent") for i in range(5)],
        events=[
            EnforcementEvent(turn=2, preference_id="blunt"),
            EnforcementEvent(turn=2, preference_id="tldr_end"),
            DraftUpdateEvent(turn=4, draft="5"),
        ],
        outcome=CollabOutcome(draft="5", answer="5", problem_id="p", problem=problem),
    )
    # UE counts enforcing messages (as MSC does); UE_pref the preferences they enforce.
    assert bench.score(record) == {"TS": 1.0, "UE": 1.0, "UE_pref": 2.0, "Len": 5.0}
    record.outcome = CollabOutcome(draft="6", answer="5", problem_id="p", problem=problem)
    assert bench.score(record)["TS"] == 0.0


async def test_the_agent_samples_at_the_configured_temperature() -> None:
    from rapport.envs import Condition, SessionSpec
    from rapport.eval import play_session
    from rapport.llm import ModelRoles, Request, ScriptedAPI
    from rapport.memory import create_memory

    seen: list[float] = []

    def agent(request: Request) -> str:
        seen.append(request.config.temperature)
        return "Which numbers does your problem use?"

    bench = create_benchmark(_config(problems="generated", agent_temperature="0.3"))
    said = json.dumps({"enforce_preferences": False, "draft_answer": "", "response": "Hi."})
    grade = json.dumps({"reasoning": "none given", "accuracy": 0})
    roles = ModelRoles(
        {
            "agent": ScriptedAPI(responder=agent),
            "user": ScriptedAPI([said] * 9),
            "judge": ScriptedAPI([grade]),
        }
    )
    [user] = bench.users(1, seed=5)
    spec: SessionSpec = bench.sessions(user, 1, seed=5)[0]
    await play_session(
        bench,
        spec,
        user,
        models=roles,
        memory=create_memory("none", roles),
        condition=Condition(name="none", memory="none"),
    )
    assert seen and set(seen) == {0.3}
    with pytest.raises(pydantic.ValidationError, match="agent_temperature"):
        create_benchmark(_config(agent_temperature="-1"))
