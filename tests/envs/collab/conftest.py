"""Scripted participants for collab session tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from rapport.envs import Condition, SessionSpec
from rapport.envs.collab import (
    SMALL_PRESET,
    CollabBenchmark,
    CollabOptions,
    CollabTask,
    CollabUser,
    Persona,
    Problem,
    Protocol,
    protocol_of,
)
from rapport.llm import ModelRoles, Request, ScriptedAPI

TRAIN = Problem(
    id="train-speed",
    source="test",
    kind="math",
    question="A train travels 120 km in 2 hours. What is its average speed in km/h?",
    answer="60",
)


def reaction(
    *,
    satisfied: bool = True,
    enforce: bool = False,
    draft: str = "",
    stop: bool = False,
    message: str = "Okay.",
    prefs: tuple[str, ...] = ("bullet_points", "blunt", "stepwise_derivation"),
) -> str:
    """One scripted user-model reaction (JSON, as a model would write it)."""
    return json.dumps(
        {
            "preferences": [
                {"preference_id": p, "satisfied": satisfied, "reason": "r"} for p in prefs
            ],
            "enforce": enforce,
            "update_draft": bool(draft),
            "draft": draft,
            "stop": stop,
            "message": message,
        }
    )


def scripted_user(opening: str, reactions: list[str]) -> ScriptedAPI:
    """A user model: plain text for the opening, the reactions in order for schema calls."""
    queue = list(reactions)

    def respond(request: Request) -> str:
        if request.json_schema is None:
            return opening
        return queue.pop(0) if queue else reaction()

    return ScriptedAPI(responder=respond, name="scripted/user")


class Harness:
    """Builds and runs one session with scripted agent and user models."""

    def __init__(self, agent_replies: list[str] | Callable[[Request], str], user: ScriptedAPI):
        self.agent_api = (
            ScriptedAPI(agent_replies, name="scripted/agent")
            if isinstance(agent_replies, list)
            else ScriptedAPI(responder=agent_replies, name="scripted/agent")
        )
        self.user_api = user
        self.roles = ModelRoles({"agent": self.agent_api, "user": self.user_api})

    async def run(
        self,
        *,
        max_turns: int = 5,
        memory: Any = None,
        condition: Condition | None = None,
        user: CollabUser | None = None,
        problem: Problem = TRAIN,
        user_kind: str = "llm",
        protocol: Protocol | None = None,
    ) -> Any:
        from rapport.eval import play_session
        from rapport.memory import create_memory

        protocol = protocol or small_protocol(user_kind)
        bench = CollabBenchmark([problem], max_turns=max_turns, protocol=protocol)
        spec = SessionSpec(
            id=problem.id, user_id="user-000", index=0, task=CollabTask(problem=problem)
        )
        record = await play_session(
            bench,
            spec,
            user or make_user(),
            models=self.roles,
            memory=memory or create_memory("none", self.roles),
            condition=condition or Condition(name="none", memory="none"),
        )
        return bench, record


def small_protocol(user_kind: str = "llm", **options: Any) -> Protocol:
    """How the ``small`` preset plays a session (the guarded user, checkers, code grading)."""
    chosen = {**SMALL_PRESET.options["collab"], "user": user_kind, **options}
    return protocol_of(CollabOptions.model_validate(chosen))


def make_user(
    prefs: tuple[str, ...] = ("bullet_points", "blunt", "stepwise_derivation"),
) -> CollabUser:
    """A user holding these preferences."""
    persona = Persona(description="Ada, a carpenter who likes tidy answers.")
    return CollabUser(
        id="user-000", persona=persona.description, preferences=list(prefs), profile=persona
    )


@pytest.fixture
def kit() -> SimpleNamespace:
    """The helpers above, for tests (conftest modules are not importable by name)."""
    return SimpleNamespace(
        Harness=Harness,
        reaction=reaction,
        scripted_user=scripted_user,
        make_user=make_user,
        small_protocol=small_protocol,
        TRAIN=TRAIN,
    )
