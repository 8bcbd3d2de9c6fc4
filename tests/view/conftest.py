"""A scripted collab run (none vs reflection) whose sessions hold recalled memory,
enforcements, preference verdicts, draft updates and errors: what the viewer must show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rapport.eval import ExperimentConfig, run
from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI

NOTE = "Wants every answer as short bullet points"
_PREF_LINE = re.compile(r"^- ([a-z_]+): ", re.MULTILINE)


def _title(request: Request) -> str:
    return str((request.json_schema or {}).get("title", ""))


def user_reply(request: Request) -> str:
    """Opens plainly; enforces its preferences on prose, settles on a bulleted answer."""
    if request.json_schema is None:
        return "Hi, could you help me with a word problem about a train?"
    system, task = request.messages[0].content, request.messages[-1].content
    latest = task.split("The assistant's latest message:", 1)[-1]
    happy = "\n- " in latest
    return json.dumps(
        {
            "preferences": [
                {"preference_id": p, "satisfied": happy, "reason": "r"}
                for p in _PREF_LINE.findall(system)
            ],
            "enforce": not happy,
            "update_draft": happy,
            "draft": "60 km/h",
            "stop": happy,
            "message": "Thanks, that settles it." if happy else "Please redo it.",
        }
    )


def memory_reply(request: Request) -> str:
    """Reflection keeps one note; recall selects it."""
    if _title(request) == "NoteSelection":
        return json.dumps({"notes": [1]})
    return json.dumps({"reasoning": "They pushed back on long prose.", "notes": [NOTE]})


class Agent:
    """Prose until memory says otherwise, then bullets; its `fail_at`-th call fails."""

    def __init__(self, fail_at: int | None) -> None:
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, request: Request) -> str:
        self.calls += 1
        if self.calls == self.fail_at:
            raise ModelError("the agent's server dropped the connection")
        if any(NOTE in m.content for m in request.messages):
            return "Speed:\n- 120 km in 2 hours\n- 60 km/h"
        return "The train covers 120 km in 2 hours, so its speed is 60 km/h, the answer."


def scripted_roles(fail_at: int | None = None) -> ModelRoles:
    """Agent, user and memory roles answering as above."""
    return ModelRoles(
        {
            "agent": ScriptedAPI(responder=Agent(fail_at), name="scripted/agent"),
            "user": ScriptedAPI(responder=user_reply, name="scripted/user"),
            "memory": ScriptedAPI(responder=memory_reply, name="scripted/memory"),
        }
    )


def make_run(run_dir: Path, *, users: int = 2, sessions: int = 3, fail_at: int | None = 30) -> Path:
    """Run collab none vs reflection on the scripted roles (one agent call fails)."""
    config = ExperimentConfig(
        benchmark="collab",
        memory=["none", "reflection"],
        users=users,
        sessions=sessions,
        max_turns=3,
        run_dir=run_dir,
        options={"problems": "generated"},
        cache=False,
        preset="small",  # the scripted user below answers the guarded user's prompt
    )
    run(config, models=scripted_roles(fail_at), progress=False)
    return run_dir


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted run (built once per test session)."""
    return make_run(tmp_path_factory.mktemp("view") / "run")
