"""A study session as the agent meets it: played by the same session loop as a run, with a
participant side that answers from a list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from rapport.envs.study import (
    StudyBenchmark,
    StudyOptions,
    SurveyAnswers,
    assign,
    load_design,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles, ScriptedAPI
from rapport.log import Condition, SessionSpec, UserSpec
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


def _play(memory: str = "none", index: int = 0) -> tuple[ScriptedAPI, StudyBenchmark]:
    benchmark = _benchmark()
    agent = ScriptedAPI(responder=lambda request: "Tell me more.", name="scripted/agent")
    models = ModelRoles({"agent": agent, "memory": agent})
    side = ListSide(["My function returns nothing.", "Thanks, that is it."])
    benchmark.connect(lambda spec, user, condition: side)
    user = benchmark.user("p01")
    spec: SessionSpec = benchmark.block_sessions("p01", memory)[index]
    record = asyncio.run(
        play_session(
            benchmark,
            spec,
            user,
            models=models,
            memory=create_memory(memory, models),
            condition=Condition(name=memory, memory=memory),
        )
    )
    assert record.status == "ok", record.events
    assert side.replies == ["Tell me more.", "Tell me more."]
    return agent, benchmark


def test_the_agent_is_never_shown_the_participants_problem() -> None:
    agent, benchmark = _play()
    spec = benchmark.block_sessions("p01", "none")[0]
    problem = benchmark.design.problem_bank()[spec.id]
    prompts = [m.content for request in agent.requests for m in request.messages]
    assert prompts, "the agent was never called"
    shown = "\n".join(prompts)
    assert problem.title not in shown
    assert problem.text.strip().splitlines()[0] not in shown
    assert "not shown to you" in agent.requests[0].messages[0].content


def test_a_participant_is_a_user_with_their_card() -> None:
    user: UserSpec = _benchmark().user("p01")
    assert user.id == "p01" and user.preferences
