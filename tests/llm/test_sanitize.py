"""The provider boundary: what a model returns is made safe before anything keeps it."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from rapport.llm import (
    Completion,
    InMemoryCache,
    Message,
    Model,
    ModelError,
    OutputValidationError,
    ScriptedAPI,
    ToolCall,
    record_calls,
)
from rapport.llm._sanitize import MAX_ARG_DEPTH, MAX_TEXT_CHARS, clean_text, clean_value

ASK = [Message(role="user", content="hi")]


class Answer(BaseModel):
    a: int


def test_lone_surrogates_become_replacement_characters_and_pairs_join() -> None:
    assert clean_text("ok \ud83d") == "ok \ufffd"
    assert clean_text("\ud83d\ude00") == "\U0001f600"
    assert clean_text("plain") == "plain"


def test_values_are_cut_to_a_depth_and_a_count_without_recursion() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):
        node["a"] = node = {}
    out = clean_value(deep)
    depth = 0
    while isinstance(out, dict):
        out, depth = out["a"], depth + 1
    assert out == "..." and depth == MAX_ARG_DEPTH
    assert len(clean_value(list(range(50_000)))) <= 10_000
    json.dumps(clean_value({"\ud800": ["x\udfff"]}))  # encodable


async def test_text_is_cleaned_cut_and_its_length_recorded_once_for_cache_and_caller() -> None:
    huge = "ok \ud83d " + "x" * (MAX_TEXT_CHARS * 2)
    cache = InMemoryCache()
    model = Model(ScriptedAPI(responder=lambda _r: huge), cache=cache)
    with record_calls() as calls:
        out = await model.generate(ASK)
        again = await model.generate(ASK)
    assert len(out.text) == MAX_TEXT_CHARS and "\ufffd" in out.text
    assert again.cached and again.text == out.text
    assert calls[0].original_chars == len(huge) and calls[1].original_chars == len(huge)
    out.model_dump_json()


async def test_deep_tool_arguments_are_bounded() -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(3000):
        node["a"] = node = {}
    call = ToolCall(id="c\ud800", name="f", arguments=deep)
    model = Model(ScriptedAPI(responder=lambda _r: Completion(tool_calls=[call])))
    out = await model.generate(ASK)
    out.model_dump_json()  # no "maximum serialization depth"
    assert out.tool_calls[0].id == "c\ufffd"


@pytest.mark.parametrize("depth", [5000, 50_000])
async def test_deeply_nested_json_is_an_invalid_output_not_a_crash(depth: int) -> None:
    text = '{"a":' * depth + "1" + "}" * depth
    model = Model(ScriptedAPI(responder=lambda _r: text), role="judge")
    with pytest.raises(OutputValidationError):
        await model.generate(ASK, schema=Answer)


async def test_a_provider_that_raises_anything_fails_as_its_role_and_is_not_cached() -> None:
    def broken(_r: object) -> str:
        raise RuntimeError("socket closed \ud800")

    model = Model(ScriptedAPI(responder=broken), role="user")
    with record_calls() as calls, pytest.raises(ModelError) as info:
        await model.generate(ASK)
    assert info.value.role == "user" and "RuntimeError" in str(info.value)
    assert calls[0].error is not None and not calls[0].cached
    calls[0].model_dump_json()


async def test_a_failed_call_is_counted_as_a_failure_never_as_cached() -> None:
    model = Model(ScriptedAPI([]), role="agent")
    with record_calls() as calls, pytest.raises(ModelError):
        await model.generate(ASK)
    assert calls[0].cached is False and calls[0].error
