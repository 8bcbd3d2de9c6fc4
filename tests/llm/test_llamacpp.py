"""The embedded llama.cpp provider on the small embedded model (real weights, short outputs)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from rapport.llm import (
    Completion,
    ContextFull,
    GenerateConfig,
    InMemoryCache,
    Message,
    Model,
    ModelAPI,
    ModelError,
    Request,
    ToolSpec,
    create_api,
    record_calls,
    serve_model,
)

SMALL = "llamacpp/qwen2.5-coder-0.5b"
pytestmark = pytest.mark.real_model


class Capital(BaseModel):
    country: str = Field(max_length=30)
    capital: str = Field(max_length=30)


WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


@pytest.fixture(scope="module")
def small() -> ModelAPI:
    try:
        return create_api(SMALL)
    except ModelError as exc:
        pytest.skip(f"embedded model not available: {exc}")


class CountingAPI(ModelAPI):
    """Delegates to a provider and counts the calls that reach it."""

    def __init__(self, api: ModelAPI) -> None:
        self.api = api
        self.name = api.name
        self.calls = 0

    async def complete(self, request: Request) -> Completion:
        self.calls += 1
        return await self.api.complete(request)


def _ask(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


async def test_plain_generation_counts_real_tokens(small: ModelAPI) -> None:
    out = await Model(small).generate(
        _ask("Reply with one word: the colour of the sky on a clear day."),
        config=GenerateConfig(max_tokens=8),
    )
    assert out.text.strip()
    assert out.usage.prompt_tokens > 10
    assert 0 < out.usage.completion_tokens <= 8


async def test_a_reply_streams_token_by_token_into_the_same_text(small: ModelAPI) -> None:
    pieces: list[str] = []
    out = await Model(small).generate(
        _ask("Count from one to five in words, separated by spaces."),
        config=GenerateConfig(max_tokens=12),
        on_text=pieces.append,
    )
    assert len(pieces) > 1
    assert out.text.startswith("".join(pieces).strip())


async def test_schema_output_is_decoded_under_the_grammar(small: ModelAPI) -> None:
    out = await Model(small).generate(
        _ask("Give the capital of France as JSON with keys country and capital."),
        schema=Capital,
        config=GenerateConfig(max_tokens=40, max_retries=0),
    )
    assert isinstance(out.parsed, Capital)
    assert "paris" in out.parsed.capital.lower()


class Verdict(BaseModel):
    verdict: Literal["alpha", "beta"]
    count: int


async def test_the_lazy_grammar_holds_when_the_model_wants_to_leave_it(small: ModelAPI) -> None:
    # At a high temperature, asked for words the schema forbids, the unconstrained draw is
    # refused often; every refused token is redrawn under the full mask.
    for seed in range(3):
        out = await small.complete(
            Request(
                messages=_ask("Reply in plain prose, no JSON: describe a gamma ray in detail."),
                json_schema=Verdict.model_json_schema(),
                config=GenerateConfig(max_tokens=60, temperature=1.5, seed=seed),
            )
        )
        parsed = Verdict.model_validate_json(out.text)
        assert parsed.verdict in ("alpha", "beta")


async def test_a_tool_call_is_parsed_from_the_reply(small: ModelAPI) -> None:
    out = await Model(small).generate(
        _ask("What is the weather in Paris right now?"),
        tools=[WEATHER],
        config=GenerateConfig(max_tokens=40),
    )
    assert [c.name for c in out.tool_calls] == ["get_weather"]
    assert "paris" in str(out.tool_calls[0].arguments.get("city", "")).lower()


async def test_the_same_request_twice_reaches_the_engine_once(small: ModelAPI) -> None:
    counting = CountingAPI(small)
    model = Model(counting, cache=InMemoryCache())
    messages = _ask("Say hi.")
    with record_calls() as calls:
        first = await model.generate(messages, config=GenerateConfig(max_tokens=4))
        second = await model.generate(messages, config=GenerateConfig(max_tokens=4))
    assert counting.calls == 1
    assert second.text == first.text and second.cached and not first.cached
    assert [c.cached for c in calls] == [False, True]


async def test_the_served_model_answers_openai_clients_with_schema_output(
    small: ModelAPI,
) -> None:
    with serve_model(SMALL, n_ctx=2048) as served:
        assert served.base_url.startswith("http://127.0.0.1:")
        api = create_api(served.spec, base_url=served.base_url, max_retries=0)
        out = await Model(api).generate(
            _ask("Give the capital of France as JSON with keys country and capital."),
            schema=Capital,
            config=GenerateConfig(max_tokens=40, max_retries=0),
        )
    assert isinstance(out.parsed, Capital) and out.usage.completion_tokens > 0


def _turns(system: str, texts: list[str]) -> Request:
    messages = [Message(role="system", content=system)]
    for i, text in enumerate(texts):
        messages.append(Message(role="user" if i % 2 == 0 else "assistant", content=text))
    return Request(messages=messages, config=GenerateConfig(max_tokens=24, seed=3))


def test_reusing_a_prefix_never_changes_the_output(small: ModelAPI) -> None:
    """A resumed run must repeat an uninterrupted one: reuse may save time, never change text."""
    engine = small.engine()  # type: ignore[attr-defined]
    agent = "You are a patient tutor. Explain briefly. " * 20
    user = "You play a student who reacts to the tutor's explanation in one sentence. " * 20
    first = engine.complete(_turns(agent, ["What is a prime number?"]))
    engine.complete(_turns(user, ["The tutor said: " + first.text]))
    follow_up = _turns(agent, ["What is a prime number?", first.text, "Give one example."])
    reused_before = engine.prefix_cache.reused_tokens
    with_reuse = engine.complete(follow_up)
    assert engine.prefix_cache.reused_tokens > reused_before  # the agent's prefix came back
    engine.reset()
    from_scratch = engine.complete(follow_up)
    assert with_reuse.text == from_scratch.text


def test_calls_in_flight_are_decoded_together(small: ModelAPI) -> None:
    """Four sessions' calls share decoding steps; each gets its own complete answer."""
    engine = small.engine()  # type: ignore[attr-defined]
    requests = [
        Request(
            messages=_ask(f"Name {n} colours, comma separated."),
            json_schema=Capital.model_json_schema() if n == 2 else None,
            config=GenerateConfig(
                max_tokens=48 if n == 2 else 16, seed=n, temperature=0.7 * (n % 2)
            ),
        )
        for n in range(1, 5)
    ]
    steps, tokens = engine.decoder.steps, engine.decoder.stepped_tokens
    outs = engine.complete_many(requests)
    assert engine.decoder.parallel >= 4
    assert engine.decoder.stepped_tokens - tokens > engine.decoder.steps - steps  # batches > 1
    assert all(o.usage.completion_tokens > 0 for o in outs)
    assert isinstance(Capital.model_validate_json(outs[1].text), Capital)  # its own grammar
    assert engine.complete_many(requests) == outs  # the same calls again: the same bytes


async def test_a_run_raises_the_engine_parallelism_to_its_concurrency(small: ModelAPI) -> None:
    from rapport.llm import ModelRoles

    roles = ModelRoles({"all": small})
    roles.get("agent")
    roles.set_concurrency(3)
    assert small.parallel >= 3  # type: ignore[attr-defined]


class Booking(BaseModel):
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    pattern: str = Field(max_length=20)  # a field named like the keyword stays


def test_regex_classes_in_patterns_are_spelled_out_for_the_grammar() -> None:
    from rapport.llm._llamacpp import drop_patterns, spell_out_patterns

    schema = Booking.model_json_schema()
    spelled = spell_out_patterns(schema)
    assert spelled["properties"]["date"]["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    dropped = drop_patterns(schema)
    assert "pattern" not in dropped["properties"]["date"]
    assert dropped["properties"]["pattern"] == schema["properties"]["pattern"]


async def test_a_date_pattern_is_decoded_under_the_grammar(small: ModelAPI) -> None:
    out = await Model(small).generate(
        _ask("Book for the first of March 2026 with pattern 'window'. Answer in JSON."),
        schema=Booking,
        config=GenerateConfig(max_tokens=40, max_retries=0),
    )
    assert isinstance(out.parsed, Booking)


async def test_a_reply_that_cannot_be_read_fails_its_call_and_the_engine_goes_on(
    small: ModelAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rapport.llm._llamacpp as llamacpp

    def broken(text: str, tool_names: object = ()) -> object:
        raise AttributeError("a reading bug")

    request = Request(
        messages=_ask("Weather in Oslo?"), tools=[WEATHER], config=GenerateConfig(max_tokens=12)
    )
    with monkeypatch.context() as patch:
        patch.setattr(llamacpp, "parse_tool_calls", broken)
        with pytest.raises(ModelError, match="a reading bug"):
            await small.complete(request)
    out = await small.complete(request.model_copy(update={"messages": _ask("Weather in Rome?")}))
    assert out.text or out.tool_calls


async def test_a_prompt_past_the_context_is_refused_as_context_full(small: ModelAPI) -> None:
    long = Request(messages=_ask("word " * 9000), config=GenerateConfig(max_tokens=4))
    with pytest.raises(ContextFull, match="more than the context of 8192"):
        await small.complete(long)
    out = await small.complete(
        Request(messages=_ask("Say hi."), config=GenerateConfig(max_tokens=4))
    )
    assert out.text
