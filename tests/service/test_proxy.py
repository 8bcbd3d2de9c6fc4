"""The OpenAI-compatible proxy: memory into the request, learning when the conversation ends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from fastapi.testclient import TestClient

from rapport.service import MemoryHub, ServiceSettings, Upstream, create_app
from rapport.service._serve import running

from .conftest import KEYS
from .upstream import upstream_app


@pytest.fixture
def seen() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def service(hub: MemoryHub, seen: list[dict[str, Any]]) -> Iterator[str]:
    """The service (its worker on) with the proxy to a loopback upstream; yields its URL."""
    with running(upstream_app(seen)) as upstream_url:
        app = create_app(
            hub, ServiceSettings(rate_per_min=0, poll_s=0.05), Upstream(f"{upstream_url}/v1")
        )
        with running(app) as url:
            yield url


def _client(url: str, tenant: str = "acme") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=KEYS[tenant], max_retries=0)


def _ended(url: str, tenant: str, conversation: str, hub: MemoryHub) -> None:
    import httpx

    reply = httpx.post(
        f"{url}/v1/conversations/{conversation}/end",
        headers={"Authorization": f"Bearer {KEYS[tenant]}"},
        timeout=60,
    )
    assert reply.status_code == 202
    job = reply.json()["job"]
    done = httpx.get(
        f"{url}/v1/jobs/{job}",
        params={"wait": 60},
        headers={"Authorization": f"Bearer {KEYS[tenant]}"},
        timeout=70,
    )
    assert (done.json()["status"], done.json()["version"]) == ("done", 1)


@pytest.mark.parametrize("stream", [False, True])
def test_a_preference_stated_in_one_conversation_is_followed_in_the_next(
    service: str, hub: MemoryHub, seen: list[dict[str, Any]], stream: bool
) -> None:
    client = _client(service)
    first = [{"role": "user", "content": "Please always use bullet points when you explain."}]
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=first, user="ada", stream=stream
    )
    conversation = raw.headers["x-rapport-conversation"]
    if stream:
        "".join(c.choices[0].delta.content or "" for c in raw.parse())
    _ended(service, "acme", conversation, hub)
    second = [{"role": "user", "content": "Explain how bullet points help reading."}]
    reply = client.chat.completions.create(model="m", messages=second, user="ada")
    assert reply.choices[0].message.content.startswith("- ")
    shown = seen[-1]["messages"]
    assert shown[-1]["role"] == "system" and "<user-notes>" in shown[-1]["content"]
    assert "always use bullet points" in shown[-1]["content"]
    other = client.chat.completions.create(model="m", messages=second, user="bob")
    assert other.choices[0].message.content == "A plain paragraph answer."


def test_the_proxy_needs_a_tenant_key_and_a_user(service: str) -> None:
    bad = openai.OpenAI(base_url=f"{service}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], user="ada"
        )
    with pytest.raises(openai.UnprocessableEntityError):
        _client(service).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )


def test_one_tenants_notes_never_reach_anothers_requests(
    service: str, hub: MemoryHub, seen: list[dict[str, Any]]
) -> None:
    acme = _client(service, "acme")
    said = [{"role": "user", "content": "Bullet points, and my code word is heron-42."}]
    raw = acme.chat.completions.with_raw_response.create(model="m", messages=said, user="ada")
    _ended(service, "acme", raw.headers["x-rapport-conversation"], hub)
    ask = [{"role": "user", "content": "What is my code word? bullet points heron"}]
    _client(service, "globex").chat.completions.create(model="m", messages=ask, user="ada")
    assert "heron-42" not in str(seen[-1]["messages"][:-1]) and "<user-notes>" not in str(seen[-1])


def test_a_tenant_key_cannot_end_another_tenants_conversation(service: str, hub: MemoryHub) -> None:
    import httpx

    said = [{"role": "user", "content": "Short answers."}]
    raw = _client(service).chat.completions.with_raw_response.create(
        model="m", messages=said, user="ada"
    )
    conversation = raw.headers["x-rapport-conversation"]
    reply = httpx.post(
        f"{service}/v1/conversations/{conversation}/end",
        headers={"Authorization": f"Bearer {KEYS['globex']}"},
        timeout=60,
    )
    assert reply.status_code == 404


def test_the_in_process_app_has_the_proxy_routes(hub: MemoryHub) -> None:
    app = create_app(hub, ServiceSettings(worker=False), Upstream("http://127.0.0.1:9/v1"))
    with TestClient(app) as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert "/v1/chat/completions" in paths and "/v1/conversations/{conversation}/end" in paths
