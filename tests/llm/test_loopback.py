"""The loopback OpenAI-compatible server: replies, schemas, latency, bounds, idle stop."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest
from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model
from rapport.llm._loopback import (
    LoopbackServer,
    LoopbackSettings,
    default_reply,
    run_loopback,
    schema_example,
)
from rapport.llm._openai import OpenAIAPI

pytestmark = pytest.mark.race


class Verdict(BaseModel):
    ok: bool = False
    reason: str = Field(min_length=3, max_length=40)
    score: int = Field(ge=1, le=5)
    tags: list[str] = Field(default_factory=list, min_length=1)
    kind: str = Field(json_schema_extra={"enum": ["a", "b"]})


def test_schema_example_fits_pydantic_schemas() -> None:
    value = schema_example(Verdict.model_json_schema())
    assert Verdict.model_validate(value).score == 1


def test_text_and_structured_replies_through_the_openai_provider() -> None:
    with run_loopback(LoopbackSettings(latency_s=0.0, completion_tokens=5)) as server:
        model = Model(OpenAIAPI("loopback", base_url=server.base_url, max_retries=0))

        async def both() -> tuple[str, object]:
            text = await model.generate([Message(role="user", content="hello there")])
            parsed = await model.generate([Message(role="user", content="judge")], schema=Verdict)
            return text.text, parsed.parsed

        text, parsed = asyncio.run(both())
        assert len(text.split()) == 5
        assert isinstance(parsed, Verdict)
        assert server.requests == 2


def test_concurrent_calls_are_in_flight_at_once() -> None:
    """The server holds each request until all 20 are in: a client that sent them one at a
    time would get error replies instead."""
    arrived: list[object] = []
    all_in: list[asyncio.Event] = []  # made on the server's own loop

    async def held(request: dict[str, Any]) -> str:
        if not all_in:
            all_in.append(asyncio.Event())
        arrived.append(request)
        if len(arrived) == 20:
            all_in[0].set()
        await asyncio.wait_for(all_in[0].wait(), 60)
        return default_reply(request, words=10)

    settings = LoopbackSettings(latency_s=0.0, tokens_per_s=100.0, completion_tokens=10)
    with run_loopback(settings, responder=held) as server:
        api = OpenAIAPI("loopback", base_url=server.base_url, max_retries=0)
        model = Model(api)

        async def many() -> None:
            config = GenerateConfig(max_tokens=10)
            await asyncio.gather(
                *(
                    model.generate([Message(role="user", content=f"q{i}")], config=config)
                    for i in range(20)
                )
            )

        asyncio.run(many())
        assert server.peak_in_flight == 20 and server.requests == 20


def test_models_route_and_unknown_route() -> None:
    with run_loopback(LoopbackSettings(latency_s=0.0)) as server:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == "loopback"
        try:
            urllib.request.urlopen(f"{server.base_url}/nothing", timeout=5)
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
        else:
            raise AssertionError("expected a 404")


def test_binds_loopback_only_and_stops_when_idle() -> None:
    async def idle() -> None:
        server = LoopbackServer(LoopbackSettings(idle_timeout_s=0.2))
        await server.start()
        assert server.base_url.startswith("http://127.0.0.1:")
        await asyncio.wait_for(server.wait_stopped(), 30)  # stops by itself, or this fails

    asyncio.run(idle())


def test_refuses_bodies_over_the_bound() -> None:
    settings = LoopbackSettings(latency_s=0.0, max_body_bytes=1000)
    with run_loopback(settings) as server:
        body = json.dumps({"messages": [{"role": "user", "content": "x" * 5000}]}).encode()
        request = urllib.request.Request(f"{server.base_url}/chat/completions", data=body)
        try:
            urllib.request.urlopen(request, timeout=5)
        except urllib.error.HTTPError as exc:
            assert exc.code == 413
        except ConnectionError:
            pass
        else:
            raise AssertionError("expected the body to be refused")
