"""The lean JSON client and the openai provider's ``direct`` transport, on the loopback server."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from rapport.llm import Message, Model, ModelError
from rapport.llm._http import HTTPStatusError, JSONClient
from rapport.llm._loopback import LoopbackSettings, run_loopback
from rapport.llm._openai import OpenAIAPI


class Answer(BaseModel):
    value: int
    note: str


@pytest.mark.race
def test_direct_transport_gives_what_the_sdk_gives() -> None:
    with run_loopback(LoopbackSettings(latency_s=0.0, completion_tokens=4)) as server:

        async def ask(transport: str) -> tuple[str, object, int]:
            api = OpenAIAPI("loopback", base_url=server.base_url, transport=transport)  # type: ignore[arg-type]
            model = Model(api)
            text = await model.generate([Message(role="user", content="hi")])
            parsed = await model.generate([Message(role="user", content="n?")], schema=Answer)
            return text.text, parsed.parsed, text.usage.completion_tokens

        assert asyncio.run(ask("direct")) == asyncio.run(ask("sdk"))


@pytest.mark.race
def test_keeps_connections_alive_and_survives_a_new_loop() -> None:
    with run_loopback(LoopbackSettings(latency_s=0.0)) as server:
        client = JSONClient(server.base_url)
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}

        async def burst() -> int:
            replies = await asyncio.gather(
                *(client.post("/chat/completions", body) for _ in range(10))
            )
            return len(replies)

        assert asyncio.run(burst()) == 10
        assert 1 <= len(client._idle) <= 10
        assert asyncio.run(burst()) == 10  # a new event loop: the old connections are dropped


@pytest.mark.race
def test_status_errors_and_refused_connections_become_model_errors() -> None:
    with run_loopback(LoopbackSettings(latency_s=0.0)) as server:
        client = JSONClient(server.base_url)
        with pytest.raises(HTTPStatusError) as caught:
            asyncio.run(client.post("/nowhere", {}))
        assert caught.value.status_code == 404
        port = server.port
    api = OpenAIAPI("m", base_url=f"http://127.0.0.1:{port}/v1", transport="direct")
    with pytest.raises(ModelError, match=r"127\.0\.0\.1"):
        asyncio.run(Model(api).generate([Message(role="user", content="hi")]))


def test_unknown_transport_is_refused() -> None:
    with pytest.raises(ModelError, match="transport"):
        OpenAIAPI("m", base_url="http://127.0.0.1:1/v1", transport="carrier")  # type: ignore[arg-type]


def test_the_transport_defaults_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAPPORT_OPENAI_TRANSPORT", "direct")
    assert OpenAIAPI("m", base_url="http://127.0.0.1:1/v1").transport == "direct"
    monkeypatch.delenv("RAPPORT_OPENAI_TRANSPORT")
    assert OpenAIAPI("m", base_url="http://127.0.0.1:1/v1").transport == "sdk"


@pytest.mark.race
def test_a_server_that_never_answers_times_out_and_its_connection_is_dropped() -> None:
    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # takes the request, never answers

    async def ask() -> tuple[type[BaseException], int]:
        server = await asyncio.start_server(mute, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = JSONClient(f"http://127.0.0.1:{port}/v1", timeout=0.2)
        try:
            with pytest.raises(TimeoutError) as caught:
                await client.post("/chat/completions", {"model": "m", "messages": []})
            url = f"http://127.0.0.1:{port}/v1"
            api = OpenAIAPI("m", base_url=url, transport="direct", timeout=0.2)
            with pytest.raises(ModelError, match="TimeoutError"):
                await Model(api).generate([Message(role="user", content="hi")])
            return caught.type, len(client._idle)
        finally:
            server.close()

    assert asyncio.run(ask()) == (TimeoutError, 0)
