"""A study session as the agent meets it: played by the same session loop as a run, with a
participant side that answers from a list."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Literal

from rapport.envs.study import (
    INITIAL_NOTES,
    StudyBenchmark,
    StudyOptions,
    SurveyAnswers,
    assign,
    load_design,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import Condition, UserSpec
from rapport.memory import create_memory

EXAMPLE = Path(__file__).parents[3] / "docs" / "study-design.yaml"
ANSWERS = SurveyAnswers(
    ratings={"adherence": 3, "memory": 1, "confidence": 3, "satisfaction": 4},
    impact="followed_helped",
)


class ListSide:
    """A participant who sends the given messages, then ends and answers the survey."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = list(messages)
        self.replies: list[str] = []

    def transcript(self) -> list[tuple[Literal["user", "agent"], str]]:
        return []

    async def next_message(self) -> str | None:
        return self.messages.pop(0) if self.messages else None

    async def agent_replied(self, text: str) -> None:
        self.replies.append(text)

    async def survey(self) -> SurveyAnswers:
        return ANSWERS


def _benchmark() -> StudyBenchmark:
    design = load_design(EXAMPLE)
    return StudyBenchmark(StudyOptions(design=design, assignments=assign(design, 1)))


NOTES = "Wants a plan before any code."


def _notes(request: Request) -> str:
    return json.dumps({"reasoning": "They asked for a plan.", "notes": NOTES})


def _play(memory: str = "none", sessions: int = 1) -> tuple[ScriptedAPI, ScriptedAPI]:
    """The first `sessions` sessions of p01's block under `memory`, its options the
    study's defaults."""
    benchmark = _benchmark()
    agent = ScriptedAPI(responder=lambda request: "Tell me more.", name="scripted/agent")
    reflector = ScriptedAPI(responder=_notes, name="scripted/memory")
    models = ModelRoles({"agent": agent, "memory": reflector})
    user = benchmark.user("p01")
    learner = create_memory(memory, models, **StudyBenchmark.memory_defaults.get(memory, {}))
    for spec in benchmark.block_sessions("p01", memory)[:sessions]:
        side = ListSide(["My function returns nothing.", "Thanks, that is it."])
        benchmark.connect(lambda spec, user, condition, side=side: side)  # type: ignore[misc]
        record = asyncio.run(
            play_session(
                benchmark,
                spec,
                user,
                models=models,
                memory=learner,
                condition=Condition(name=memory, memory=memory),
            )
        )
        assert record.status == "ok", record.events
        assert side.replies == ["Tell me more.", "Tell me more."]
    return agent, reflector


def test_the_agent_is_never_shown_the_participants_problem() -> None:
    agent, _ = _play()
    benchmark = _benchmark()
    spec = benchmark.block_sessions("p01", "none")[0]
    problem = benchmark.design.problem_bank()[spec.id]
    prompts = [m.content for request in agent.requests for m in request.messages]
    assert prompts, "the agent was never called"
    shown = "\n".join(prompts)
    assert problem.title not in shown
    assert problem.text.strip().splitlines()[0] not in shown
    assert "not shown to you" in agent.requests[0].messages[0].content


def test_reflection_keeps_one_notes_document_in_the_system_prompt_and_picks_nothing() -> None:
    agent, reflector = _play("reflection", sessions=2)
    # one notes update after each session, nothing else: no per-turn pick of notes
    assert len(reflector.requests) == 2
    titles = [(r.json_schema or {}).get("title") for r in reflector.requests]
    assert titles == ["NotesUpdate", "NotesUpdate"]
    first_update = reflector.requests[0].messages[0].content
    assert INITIAL_NOTES in first_update
    assert INITIAL_NOTES not in reflector.requests[1].messages[0].content
    assert NOTES in reflector.requests[1].messages[0].content
    # session 1: no notes yet; session 2: the whole document in the system prompt
    system = [r.messages[0] for r in agent.requests]
    assert all(m.role == "system" for m in system)
    assert all(NOTES not in m.content for m in system[:2])
    assert all(NOTES in m.content for m in system[2:]) and len(system) == 4
    assert all(NOTES not in m.content for r in agent.requests for m in r.messages[1:])


def test_a_participant_is_a_user_with_their_card() -> None:
    user: UserSpec = _benchmark().user("p01")
    assert user.id == "p01" and user.preferences
