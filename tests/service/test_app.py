"""The HTTP API: keys, tenants kept apart on every route, limits, and the schema."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from rapport.service import MemoryHub, ServiceSettings, create_app

from .conftest import auth, said

ROUTES = [
    ("get", "/v1/users", None),
    ("get", "/v1/users/ada", None),
    ("get", "/v1/users/ada/versions", None),
    ("post", "/v1/users/ada/context", {"messages": said("hi")}),
    ("post", "/v1/users/ada/conversations", {"messages": said("hi")}),
    ("get", "/v1/jobs/1", None),
    ("delete", "/v1/users/ada", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic rk-acme-key", "Bearer "])
def test_every_route_needs_a_valid_key(
    client: TestClient, method: str, path: str, body: object, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    reply = client.request(method, path, json=body, headers=headers)
    assert reply.status_code == 401


async def _learned(client: TestClient, hub: MemoryHub, tenant: str, user: str, text: str) -> int:
    reply = client.post(
        f"/v1/users/{user}/conversations", json={"messages": said(text, "ok")}, headers=auth(tenant)
    )
    assert reply.status_code == 202
    await hub.work()
    job: int = reply.json()["job"]
    return job


async def test_a_tenant_never_reaches_another_tenants_users(
    client: TestClient, hub: MemoryHub
) -> None:
    job = await _learned(client, hub, "globex", "ada", "Globex secret: I like tables.")
    acme = auth("acme")
    assert client.get("/v1/users", headers=acme).json() == []
    assert client.get("/v1/users/ada", headers=acme).json()["version"] == 0
    assert client.get("/v1/users/ada/versions", headers=acme).json() == []
    assert client.get(f"/v1/jobs/{job}", headers=acme).status_code == 404
    context = client.post(
        "/v1/users/ada/context", json={"messages": said("tables? secret?")}, headers=acme
    ).json()
    assert "Globex" not in context["recall"] + context["system"]
    gone = client.delete("/v1/users/ada", headers=acme).json()
    assert gone["deleted_rows"] == 0
    theirs = client.get("/v1/users/ada", headers=auth("globex")).json()
    assert theirs["version"] == 1 and "Globex secret" in str(theirs["state"])


async def test_learning_is_accepted_then_ready_with_a_version(
    client: TestClient, hub: MemoryHub
) -> None:
    body = {"messages": said("Keep answers under five lines.", "ok")}
    headers = {**auth("acme"), "Idempotency-Key": "conv-1"}
    first = client.post("/v1/users/ada/conversations", json=body, headers=headers)
    assert first.status_code == 202 and first.json()["status"] == "queued"
    again = client.post("/v1/users/ada/conversations", json=body, headers=headers)
    assert again.status_code == 200 and again.json()["job"] == first.json()["job"]
    other = {"messages": said("another conversation")}
    assert (
        client.post("/v1/users/ada/conversations", json=other, headers=headers).status_code == 409
    )
    await hub.work()
    job = client.get(f"/v1/jobs/{first.json()['job']}", headers=auth("acme")).json()
    assert (job["status"], job["version"]) == ("done", 1)
    assert client.get("/v1/users", headers=auth("acme")).json() == [{"user": "ada", "version": 1}]


async def test_forget_over_http_leaves_nothing(client: TestClient, hub: MemoryHub) -> None:
    await _learned(client, hub, "acme", "ada", "I want code in Python.")
    gone = client.delete("/v1/users/ada", headers=auth("acme")).json()
    assert gone["deleted_rows"] > 0 and gone["remaining_rows"] == 0
    assert client.get("/v1/users/ada", headers=auth("acme")).json()["versions"] == []


@pytest.mark.parametrize("user", ["../etc", "a" * 129, "-x", "a b", "ü"])
def test_a_bad_user_id_is_refused(client: TestClient, user: str) -> None:
    assert client.get(f"/v1/users/{user}", headers=auth("acme")).status_code in (404, 422)


def test_a_body_over_the_limit_is_refused(hub: MemoryHub) -> None:
    app = create_app(hub, ServiceSettings(worker=False, max_body=1000))
    with TestClient(app) as client:
        big = {"messages": said("x" * 2000)}
        reply = client.post("/v1/users/ada/context", json=big, headers=auth("acme"))
        assert reply.status_code == 413

        def chunks() -> object:
            yield b'{"messages": [{"role": "user", "content": "'
            yield b"y" * 2000
            yield b'"}]}'

        streamed = client.post(
            "/v1/users/ada/context",
            content=chunks(),
            headers={**auth("acme"), "Content-Type": "application/json"},
        )
        assert streamed.status_code == 413


def test_a_tenant_over_its_rate_waits_and_another_does_not(hub: MemoryHub) -> None:
    app = create_app(hub, ServiceSettings(worker=False, rate_per_min=3))
    with TestClient(app) as client:
        codes = [client.get("/v1/users", headers=auth("acme")).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        assert client.get("/v1/users", headers=auth("globex")).status_code == 200


def test_the_schema_and_docs_describe_every_route(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for _method, path, _body in ROUTES:
        template = path.replace("/ada", "/{user}").replace("/1", "/{job}")
        assert template in schema["paths"]
    page = client.get("/docs")
    assert page.status_code == 200 and "<script" not in page.text.lower()
    assert "/v1/users/{user}/conversations" in page.text
