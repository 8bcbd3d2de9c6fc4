"""``scripted/auto`` answers any request reproducibly, with schema-valid JSON and tool calls."""

from __future__ import annotations

import datetime
import random
import re
from typing import Literal

from pydantic import BaseModel, Field

from rapport.llm import Message, ModelRoles, ToolSpec
from rapport.llm._pattern import FORMATS, matching


class Verdict(BaseModel):
    label: Literal["yes", "no", "unsure"]
    reason: str = Field(max_length=40)
    score: int = Field(ge=1, le=5)
    notes: list[str]
    day: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")


async def test_a_schema_request_gets_a_valid_instance_every_time() -> None:
    model = ModelRoles({"all": "scripted/auto"}).get("agent")
    for i in range(30):
        out = await model.generate([Message(role="user", content=f"case {i}")], schema=Verdict)
        assert isinstance(out.parsed, Verdict)
        assert 1 <= out.parsed.score <= 5


async def test_the_same_request_gets_the_same_reply_and_others_differ() -> None:
    model = ModelRoles({"all": "scripted/auto"}).get("agent")
    texts = [(await model.generate([Message(role="user", content=f"q{i}")])).text for i in range(8)]
    again = [(await model.generate([Message(role="user", content=f"q{i}")])).text for i in range(8)]
    assert texts == again
    assert len(set(texts)) > 1


async def test_with_tools_it_sometimes_calls_one_with_fitting_arguments() -> None:
    tool = ToolSpec(
        name="move",
        parameters={
            "type": "object",
            "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 3}},
        },
    )
    model = ModelRoles({"all": "scripted/auto"}).get("agent")
    outs = [
        await model.generate([Message(role="user", content=f"go {i}")], tools=[tool])
        for i in range(20)
    ]
    calls = [c for o in outs for c in o.tool_calls]
    assert calls and any(not o.tool_calls for o in outs)
    assert all(c.name == "move" and 1 <= c.arguments["steps"] <= 3 for c in calls)


class Slot(BaseModel):
    start: str = Field(pattern=r"^\d{1,2}:\d{2}$")
    code: str = Field(pattern=r"^[A-Z]{3}-[0-9]{2,4}$", min_length=6, max_length=8)
    weight: float = Field(gt=0.1, lt=0.9)
    step: int = Field(ge=-20, le=-5, multiple_of=5)
    level: int = Field(gt=0, lt=3)


class Plan(BaseModel):
    day: datetime.date
    when: datetime.datetime
    slots: list[Slot] = Field(min_length=4, max_length=6)
    tags: set[Literal["a", "b", "c"]] = Field(min_length=2)
    pair: tuple[int, str]
    title: str = Field(min_length=5, max_length=12)


async def test_every_constraint_of_a_schema_is_honoured() -> None:
    model = ModelRoles({"all": "scripted/auto"}).get("agent")
    for i in range(40):
        out = await model.generate([Message(role="user", content=f"plan {i}")], schema=Plan)
        assert isinstance(out.parsed, Plan)
        assert 4 <= len(out.parsed.slots) <= 6 and len(out.parsed.tags) >= 2


def test_a_pattern_gets_a_matching_string_and_a_format_a_valid_value() -> None:
    rng = random.Random(4)
    for pattern in (r"^\d{1,2}:\d{2}$", r"^(yes|no)\.?$", r"[^,]{3}@x", r"^(\w+)-\1$"):
        text = matching(pattern, rng)
        assert text is not None and re.search(pattern, text)
    assert re.fullmatch(FORMATS["date"], matching(FORMATS["date"], rng) or "")
