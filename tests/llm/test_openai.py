"""The openai provider against an in-process fake of an OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from rapport.llm import ContextFull, Message, Model, ModelError, ToolCall, ToolSpec, create_api

Body = dict[str, Any]


class Verdict(BaseModel):
    satisfied: bool
    reason: str = Field(max_length=40)


def _chat_response(content: str | None = "", tool_calls: list[Body] | None = None) -> Body:
    message: Body = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class FakeServer:
    """Records each request and answers with `reply(body)` (a body or a Response)."""

    def __init__(self, reply: Callable[[Body], Body | httpx.Response]) -> None:
        self.reply = reply
        self.requests: list[httpx.Request] = []
        self.bodies: list[Body] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content)
        self.bodies.append(body)
        answer = self.reply(body)
        return answer if isinstance(answer, httpx.Response) else httpx.Response(200, json=answer)

    def model(self, name: str = "openai/m", **options: Any) -> Model:
        client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        options.setdefault("base_url", "http://127.0.0.1:9/v1")
        api = create_api(name, http_client=client, max_retries=0, **options)
        return Model(api, role="judge")


async def test_schema_output_is_requested_as_json_schema_and_validated() -> None:
    server = FakeServer(lambda _b: _chat_response('{"satisfied": true, "reason": "fine"}'))
    out = await server.model().generate([Message(role="user", content="ok?")], schema=Verdict)
    assert out.parsed == Verdict(satisfied=True, reason="fine")
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (11, 7)
    fmt = server.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["schema"] == Verdict.model_json_schema()
    assert server.bodies[0]["model"] == "m" and "seed" in server.bodies[0]


async def test_json_object_mode_sends_the_schema_inline() -> None:
    server = FakeServer(lambda _b: _chat_response('{"satisfied": false, "reason": "no"}'))
    model = server.model(schema_mode="json_object")
    out = await model.generate([Message(role="user", content="ok?")], schema=Verdict)
    assert out.parsed is not None and out.parsed.satisfied is False
    assert server.bodies[0]["response_format"] == {
        "type": "json_object",
        "schema": Verdict.model_json_schema(),
    }


class Dated(BaseModel):
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")


async def test_json_object_mode_spells_out_pattern_classes() -> None:
    # llama-cpp-python's server dies on a `\d` in a schema pattern
    server = FakeServer(lambda _b: _chat_response('{"date": "2026-11-23"}'))
    out = await server.model(schema_mode="json_object").generate(
        [Message(role="user", content="when?")], schema=Dated
    )
    assert out.parsed == Dated(date="2026-11-23")
    sent = server.bodies[0]["response_format"]["schema"]["properties"]["date"]["pattern"]
    assert sent == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


@pytest.mark.parametrize(
    "rejection",
    [
        httpx.Response(422, json={"detail": "response_format: unexpected type"}),
        # llama-cpp-python's server: a 500 whose message names the field
        httpx.Response(500, json={"error": {"message": "('body', 'response_format', 'type')"}}),
    ],
)
async def test_a_server_rejecting_json_schema_is_asked_again_with_json_object(
    rejection: httpx.Response,
) -> None:
    def reply(body: Body) -> Body | httpx.Response:
        if body["response_format"]["type"] == "json_schema":
            return rejection
        return _chat_response('{"satisfied": true, "reason": "ok"}')

    server = FakeServer(reply)
    model = server.model()
    for question in ("a?", "b?"):
        out = await model.generate([Message(role="user", content=question)], schema=Verdict)
        assert out.parsed == Verdict(satisfied=True, reason="ok")
    assert [b["response_format"]["type"] for b in server.bodies] == [
        "json_schema",
        "json_object",
        "json_object",
    ]


async def test_native_tool_calls_are_parsed_and_tool_results_sent_back() -> None:
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    server = FakeServer(lambda _b: _chat_response(None, [call]))
    tools = [ToolSpec(name="get_weather", parameters={"type": "object", "properties": {}})]
    history = [
        Message(role="user", content="weather?"),
        Message(role="assistant", tool_calls=[ToolCall(id="call_1", name="get_weather")]),
        Message(role="tool", content="rain", tool_call_id="call_1"),
    ]
    out = await server.model().generate(history, tools=tools)
    assert out.tool_calls == [ToolCall(id="call_9", name="get_weather", arguments={"city": "Oslo"})]
    body = server.bodies[0]
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert body["messages"][2] == {"role": "tool", "content": "rain", "tool_call_id": "call_1"}


async def test_invalid_tool_arguments_are_not_turned_into_a_call() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{city: Oslo"}}
    server = FakeServer(lambda _b: _chat_response("", [call]))
    out = await server.model().generate([Message(role="user", content="x")])
    assert out.tool_calls == [] and "{city: Oslo" in out.text


async def test_server_errors_become_model_errors_without_the_key() -> None:
    server = FakeServer(lambda _b: httpx.Response(500, json={"error": {"message": "boom"}}))
    model = server.model(api_key="sk-secret-123")
    with pytest.raises(ModelError) as info:
        await model.generate([Message(role="user", content="x")])
    assert "500" in str(info.value) and "sk-secret-123" not in str(info.value)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (
            400,
            {"message": "maximum context length is 4096 tokens", "code": "context_length_exceeded"},
        ),
        (400, {"message": "This model's maximum context length is 8192 tokens."}),  # vLLM
        (400, {"message": "request exceeds context size", "type": "exceed_context_size_error"}),
    ],
)
async def test_a_prompt_past_the_context_is_context_full(status: int, error: Body) -> None:
    server = FakeServer(lambda _b: httpx.Response(status, json={"error": error}))
    with pytest.raises(ContextFull):
        await server.model().generate([Message(role="user", content="x")])


@pytest.mark.parametrize(
    ("status", "message"),
    [(400, "invalid tool schema"), (500, "context length computation crashed")],
)
async def test_other_refusals_are_not_context_full(status: int, message: str) -> None:
    server = FakeServer(lambda _b: httpx.Response(status, json={"error": {"message": message}}))
    with pytest.raises(ModelError) as info:
        await server.model().generate([Message(role="user", content="x")])
    assert type(info.value) is ModelError


async def test_an_unreachable_server_is_a_model_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    api = create_api(
        "openai/m", base_url="http://127.0.0.1:9/v1", http_client=client, max_retries=0
    )
    with pytest.raises(ModelError, match="openai/m"):
        await Model(api).generate([Message(role="user", content="x")])


async def test_endpoint_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:5555/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    server = FakeServer(lambda _b: _chat_response("hi"))
    client = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
    api = create_api("openai/local-model", http_client=client, max_retries=0)
    out = await Model(api).generate([Message(role="user", content="x")])
    assert out.text == "hi" and out.model == "openai/local-model"
    sent = server.requests[0]
    assert str(sent.url) == "http://127.0.0.1:5555/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-env"


def test_unknown_options_are_refused() -> None:
    with pytest.raises(ModelError, match="temperature"):
        create_api("openai/m", temperature=1)
    with pytest.raises(ModelError, match="schema_mode"):
        create_api("openai/m", schema_mode="grammar")


async def test_a_reply_is_kept_as_the_server_wrote_it() -> None:
    written = "  Here is the plan:\n- step one\n\n"
    server = FakeServer(lambda _b: _chat_response(written))
    out = await server.model().generate([Message(role="user", content="plan?")])
    assert out.text == written
