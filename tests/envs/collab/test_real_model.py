"""One short collab session on the small embedded model, on the ``small`` preset."""

from __future__ import annotations

import pytest

from rapport.envs import Condition
from rapport.envs.collab import (
    SMALL_PRESET,
    CollabBenchmark,
    CollabOptions,
    PreferenceVerdictEvent,
    Problem,
    protocol_of,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles
from rapport.log import ErrorEvent
from rapport.memory import create_memory


@pytest.mark.real_model
async def test_short_session_on_the_small_model_completes_and_is_scored() -> None:
    problem = Problem(
        id="apples",
        source="test",
        kind="math",
        question="Mia has 7 apples and buys 5 more. How many apples does she have now?",
        answer="12",
    )
    small = protocol_of(CollabOptions.model_validate(SMALL_PRESET.options["collab"]))
    bench = CollabBenchmark([problem], max_turns=2, protocol=small)
    roles = ModelRoles({"all": "llamacpp/qwen2.5-coder-0.5b"})
    user = bench.users(1, seed=0)[0]
    [spec] = bench.sessions(user, 1, seed=0)
    record = await play_session(
        bench,
        spec,
        user,
        models=roles,
        memory=create_memory("none", roles),
        condition=Condition(name="none", memory="none"),
    )
    scores = bench.score(record)

    assert record.events_of(ErrorEvent) == [] and record.status == "ok"
    assert 3 <= scores["Len"] <= 5
    assert sum(t.speaker == "agent" for t in record.turns) <= 2
    assert scores["TS"] in (0.0, 1.0) and scores["UE"] >= 0
    assert len(record.events_of(PreferenceVerdictEvent)) == 3 * len(
        [t for t in record.turns[1:] if t.speaker == "user"]
    )
    assert all(call.role in {"agent", "user"} for call in record.usage)
