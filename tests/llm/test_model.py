from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from rapport.llm import (
    InMemoryCache,
    Message,
    Model,
    ModelRoles,
    OutputValidationError,
    ScriptedAPI,
    record_calls,
)


class Verdict(BaseModel):
    satisfied: bool
    reason: str = Field(max_length=50)


async def test_schema_output_is_validated_and_retried_with_the_error_shown() -> None:
    api = ScriptedAPI(["not json", '{"satisfied": "maybe"}', '{"satisfied": true, "reason": "ok"}'])
    model = Model(api, role="user")
    with record_calls() as calls:
        out = await model.generate([Message(role="user", content="judge")], schema=Verdict)
    assert out.parsed == Verdict(satisfied=True, reason="ok")
    assert len(api.requests) == 3
    assert "invalid" in api.requests[1].messages[-1].content
    assert "satisfied" in api.requests[2].messages[-1].content
    assert len(calls) == 1 and calls[0].role == "user" and calls[0].error is None


async def test_invalid_output_raises_after_bounded_retries_and_is_accounted() -> None:
    model = Model(ScriptedAPI(responder=lambda _r: "{}"), role="judge")
    with record_calls() as calls, pytest.raises(OutputValidationError):
        await model.generate([Message(role="user", content="x")], schema=Verdict)
    assert calls[0].error is not None and "OutputValidationError" in calls[0].error


async def test_cache_makes_a_repeated_request_free_and_seeds_are_stable() -> None:
    api = ScriptedAPI(responder=lambda r: f"seed={r.config.seed}")
    cache = InMemoryCache()
    first = await Model(api, cache=cache, run_seed=7).generate([Message(role="user", content="hi")])
    again = await Model(api, cache=cache, run_seed=7).generate([Message(role="user", content="hi")])
    other = await Model(api, cache=cache, run_seed=8).generate([Message(role="user", content="hi")])
    assert len(api.requests) == 2
    assert again.cached and again.text == first.text
    assert other.text != first.text


async def test_without_a_cache_every_call_reaches_the_provider_with_the_same_seed() -> None:
    api = ScriptedAPI(responder=lambda r: f"seed={r.config.seed}")
    hi = [Message(role="user", content="hi")]
    cached = await Model(api, cache=InMemoryCache(), run_seed=7).generate(hi)
    first = await Model(api, run_seed=7).generate(hi)
    again = await Model(api, run_seed=7).generate(hi)
    assert len(api.requests) == 3
    assert not first.cached and not again.cached
    assert first.text == again.text == cached.text


def test_roles_share_providers_and_fall_back_to_the_default() -> None:
    roles = ModelRoles({"all": "scripted/echo", "judge2": "scripted/fixed:3"})
    assert roles.get("agent").api is roles.get("user").api
    assert roles.get("judge2").name == "scripted/fixed:3"
    assert roles.judges() == ["judge", "judge2"]
