"""A collab run whose ``memory`` role is a checkpoint served by the ``transformers`` provider."""

from __future__ import annotations

import json
import re

import pytest

from rapport.envs.collab import EnforcementEvent
from rapport.eval import ExperimentConfig, run_experiment
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.store import RunStore
from rapport.train import build_tiny_model

pytest.importorskip("transformers")


def _user(request: Request) -> str:
    """Pushes back on the first reply, then accepts the answer and stops."""
    if request.json_schema is None:
        return "Can you help me solve 3x + 5 = 20?"
    text = "\n".join(m.content for m in request.messages)
    ids = list(dict.fromkeys(re.findall(r"^- (\w+): ", text, re.MULTILINE)))
    first = text.count("Great question") <= 1
    return json.dumps(
        {
            "preferences": [
                {"preference_id": p, "satisfied": not first, "reason": "r"} for p in ids
            ],
            "enforce": first,
            "update_draft": not first,
            "draft": "" if first else "x = 5",
            "stop": not first,
            "message": "Please fix that." if first else "Thanks, x = 5.",
        }
    )


async def test_collab_run_with_a_transformers_reflector(tmp_path):
    tiny = build_tiny_model(tmp_path / "reflector", ["<reasoning> </reasoning> <notes> - user"])
    spec = f"transformers/{tiny}"
    config = ExperimentConfig(
        benchmark="collab",
        memory=["reflection"],
        users=1,
        sessions=2,
        max_turns=2,
        run_dir=tmp_path / "run",
        cache=False,
        preset="small",  # the scripted user answers the guarded user's prompt
        models={"memory": spec},
        memory_options={
            "reflection": {
                "form": "list",
                "layout": "tags",
                "max_tokens": 8,
                "select": False,
                "retries": 0,
            }
        },
    )
    roles = ModelRoles(
        {
            "all": "scripted/echo",
            "agent": ScriptedAPI(responder=lambda _r: "Great question! x = 5."),
            "user": ScriptedAPI(responder=_user),
            "memory": spec,
        }
    )
    await run_experiment(config, models=roles, progress=False)
    with RunStore(tmp_path / "run") as store:
        sessions = store.sessions()
        assert [s.index for s in sessions] == [0, 1]
        assert sessions[0].events_of(EnforcementEvent)
        memory_calls = [c for s in sessions for c in s.usage if c.role == "memory"]
        assert memory_calls and all(c.model == spec for c in memory_calls)
        assert len(store.memory_versions()) == 2
