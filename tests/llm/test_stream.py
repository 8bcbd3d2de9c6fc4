"""Streamed generation: the reply's text arrives in pieces while the output stays whole."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from rapport.llm import (
    Completion,
    InMemoryCache,
    Message,
    Model,
    ModelAPI,
    Request,
    ScriptedAPI,
    record_calls,
)
from rapport.llm._loopback import LoopbackSettings, run_loopback
from rapport.llm._openai import OpenAIAPI
from rapport.llm._spread import SpreadAPI

REPLY = "1. Read the loop.\n2. Divide by `i + 1`, then check the **last** case."


def _ask(text: str = "help") -> list[Message]:
    return [Message(role="user", content=text)]


class WholeOnly(ModelAPI):
    """A provider with no streaming of its own."""

    name = "whole/test"

    async def complete(self, request: Request) -> Completion:
        return Completion(text=REPLY)


async def test_a_scripted_reply_streams_in_pieces_that_make_the_output() -> None:
    pieces: list[str] = []
    out = await Model(ScriptedAPI([REPLY])).generate(_ask(), on_text=pieces.append)
    assert out.text == REPLY
    assert len(pieces) == len(REPLY.split())
    assert "".join(pieces) == REPLY


async def test_streamed_and_whole_generation_give_the_same_output_and_accounting() -> None:
    with record_calls() as calls:
        whole = await Model(ScriptedAPI([REPLY])).generate(_ask())
        streamed = await Model(ScriptedAPI([REPLY])).generate(_ask(), on_text=lambda _p: None)
    assert streamed.text == whole.text
    assert streamed.usage == whole.usage
    assert [c.completion_tokens for c in calls] == [whole.usage.completion_tokens] * 2


async def test_a_provider_without_streaming_hands_over_the_whole_text_once() -> None:
    pieces: list[str] = []
    out = await Model(WholeOnly()).generate(_ask(), on_text=pieces.append)
    assert pieces == [REPLY] and out.text == REPLY


async def test_a_cached_reply_streams_as_one_piece() -> None:
    api = ScriptedAPI(responder=lambda _r: REPLY)
    model = Model(api, cache=InMemoryCache())
    first: list[str] = []
    again: list[str] = []
    await model.generate(_ask(), on_text=first.append)
    out = await model.generate(_ask(), on_text=again.append)
    assert out.cached and len(api.requests) == 1
    assert len(first) > 1 and again == [REPLY]


async def test_leading_whitespace_is_not_streamed() -> None:
    pieces: list[str] = []
    await Model(ScriptedAPI(["\n\n  Hello there"])).generate(_ask(), on_text=pieces.append)
    assert "".join(pieces) == "Hello there"


async def test_structured_output_is_never_streamed() -> None:
    class Answer(BaseModel):
        value: int

    with pytest.raises(ValueError, match="not streamed"):
        await Model(ScriptedAPI(['{"value": 1}'])).generate(
            _ask(), schema=Answer, on_text=lambda _p: None
        )


@pytest.mark.race
async def test_spread_endpoints_stream_through_the_least_busy_one() -> None:
    spread = SpreadAPI([ScriptedAPI([REPLY]), ScriptedAPI([REPLY])])
    pieces: list[str] = []
    await Model(spread).generate(_ask(), on_text=pieces.append)
    assert "".join(pieces) == REPLY and spread.sent == [1, 0]


@pytest.mark.race
def test_an_openai_compatible_server_streams_its_reply_piece_by_piece() -> None:
    settings = LoopbackSettings(latency_s=0.0, tokens_per_s=200.0, completion_tokens=12)
    with run_loopback(settings) as server:
        model = Model(OpenAIAPI("loopback", base_url=server.base_url, max_retries=0))
        pieces: list[str] = []

        async def both() -> tuple[str, str, int]:
            streamed = await model.generate(_ask("hello there"), on_text=pieces.append)
            whole = await model.generate(_ask("hello there"))
            return streamed.text, whole.text, streamed.usage.completion_tokens

        streamed, whole, tokens = asyncio.run(both())
    assert streamed == whole and len(whole.split()) == 12
    assert len(pieces) == 12 and "".join(pieces).strip() == streamed
    assert tokens == 12  # the usage chunk at the end of the stream
