"""``serve_model("scripted/auto")``: the test double behind an OpenAI-compatible loopback
server answers as it does in-process: schema-valid JSON, tool calls, text."""

from __future__ import annotations

import asyncio
import socket

import pytest
from pydantic import BaseModel, Field

from rapport.llm import Message, Model, ModelError, ToolSpec, serve_model
from rapport.llm._openai import OpenAIAPI


class Verdict(BaseModel):
    satisfied: bool
    reason: str = Field(max_length=40)
    score: int = Field(ge=1, le=5)


TOOL = ToolSpec(
    name="set_alarm",
    parameters={"type": "object", "properties": {"hour": {"type": "integer"}}},
)


def test_served_double_answers_schemas_tools_and_text_reproducibly() -> None:
    asked = [[Message(role="user", content=f"question {i}")] for i in range(8)]
    with serve_model("scripted/auto") as served:
        assert served.spec == "openai/auto" and served.base_url.startswith("http://127.0.0.1:")
        model = Model(OpenAIAPI(served.model, base_url=served.base_url, max_retries=0))

        async def ask() -> list[tuple[object, list[str], str]]:
            replies = []
            for messages in asked:
                verdict = await model.generate(messages, schema=Verdict)
                called = await model.generate(messages, tools=[TOOL])
                replies.append((verdict.parsed, [c.name for c in called.tool_calls], called.text))
            return replies

        async def twice() -> tuple[list[tuple[object, list[str], str]], ...]:
            return await ask(), await ask()

        first, again = asyncio.run(twice())
    assert first == again
    assert all(isinstance(parsed, Verdict) for parsed, _, _ in first)
    calls = [names for _, names, _ in first if names]
    assert calls and all(names == ["set_alarm"] for names in calls)
    assert any(text for _, names, text in first if not names)  # text where it calls nothing


def test_a_taken_port_is_a_model_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ModelError, match="cannot serve"), serve_model("scripted/auto", port):
            pass
