"""The paper's judging: one call per dimension with the persona, its description and
trajectory hints, over a head/tail window of the transcript, at temperature 0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rapport.envs.prefix import get_setting
from rapport.envs.prefix._dimension_judge import (
    CUT_MARK,
    DimensionJudge,
    head_tail,
    transcript_lines,
)
from rapport.envs.prefix._rubric import own_rubric, rubric_from
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import Turn

PREFIX = Path(__file__).parent / "data" / "published" / "PrefIX"
TURNS = [
    Turn(index=0, speaker="user", text="Please tidy my notes folder."),
    Turn(index=1, speaker="agent", text="Moving there now."),
    Turn(index=2, speaker="tool", text="x" * 9000),
    Turn(index=3, speaker="agent", text="Done."),
]


def _judge(score: int) -> ScriptedAPI:
    def respond(request: Request) -> str:
        asked = re.search(r"(?:Dimension|Rate):? (\S+)", request.messages[-1].content)
        assert asked is not None
        name = asked.group(1)
        return json.dumps(
            {
                "dimension": name,
                "score": score,
                "justification": "ok",
                "evidence_turn_ids": ["t1", "t9"],
            }
        )

    return ScriptedAPI(responder=respond)


def test_the_window_keeps_the_first_and_last_halves() -> None:
    text = transcript_lines(TURNS)
    assert (
        text.splitlines()[0]
        == "- turn_id=t0 | role=user | kind=user_message | content=Please tidy my notes folder."
    )
    cut, was_cut = head_tail(text, 8000)
    assert was_cut and cut == text[:4000] + CUT_MARK + text[-4000:]
    assert head_tail("short", 8000) == ("short", False)


async def test_one_call_per_dimension_and_judge_at_temperature_point_one() -> None:
    rubric = own_rubric()
    judges = {"judge": _judge(4), "judge2": _judge(2)}
    models = ModelRoles({"agent": ScriptedAPI(responder=lambda _r: ""), **judges})
    judge = DimensionJudge(rubric.dimensions, rubric.dimension_template(), runs=2)
    setting = get_setting("tool_high")
    result = await judge.score(models, TURNS, rubric.persona([setting]), key="k")
    calls = [r for api in judges.values() for r in api.requests]
    assert len(calls) == 2 * 2 * len(rubric.dimensions)
    assert {r.config.temperature for r in calls} == {0.1}
    first = calls[0].messages[-1].content
    assert setting.definition in first and "tool_high" in first
    assert f"Dimension: {rubric.dimensions[0].id}" in first and CUT_MARK in first
    assert len(result.scores) == len(calls) and not result.errors
    assert {s.dimension for s in result.scores} == {d.id for d in rubric.dimensions}
    assert all(s.evidence_turns == [1] for s in result.scores)  # t9 does not exist
    assert result.means()[rubric.dimensions[0].id] == 3.0


async def test_the_checkouts_judge_prompt_and_trajectory_hints_are_sent() -> None:
    rubric = rubric_from(PREFIX)
    api = _judge(5)
    models = ModelRoles({"agent": ScriptedAPI(responder=lambda _r: ""), "judge": api})
    judge = DimensionJudge(rubric.dimensions, rubric.dimension_template())
    persona = rubric.persona([get_setting("each_confirmation")])
    await judge.score(models, TURNS[:2], persona)
    system, user = api.requests[0].messages
    assert system.content == "Fixture system line. For: each_confirmation"
    assert user.content.startswith("Fixture judge. Persona: each_confirmation\n")
    assert "Hints: trajectory_1_tool: Ask_first -> Call(A)\n" in user.content
    assert "trajectory_2_tools: Ask_first -> Call(A) -> Ask_first -> Call(B)" in user.content
    assert "Rate initiative_timing with:\n1: Fixture: steps in" in user.content
    assert '{"dimension": "initiative_timing", "score": 0}' in user.content
    assert "{{" not in user.content
