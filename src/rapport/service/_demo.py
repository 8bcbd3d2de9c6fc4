"""The builder's demo: a memory service in front of a served model, and an app that talks to
it with the ``openai`` SDK. A preference the user states in the first conversation is in the
prompt of the second, and the reply follows it where the model does."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from rapport.llm import ModelRoles, serve_model
from rapport.log import RoleModel

from ._app import ServiceSettings, create_app
from ._hub import MemoryHub
from ._proxy import Upstream
from ._serve import running

FIRST = (
    "From now on, please answer me in short bullet points, never in paragraphs. What is a hash map?"
)
SECOND = "What is a linked list?"


@dataclass
class Turn:
    """One exchange of the demo as the app saw it."""

    conversation: int
    asked: str
    answered: str


@contextmanager
def demo_service(model: str, db: Path, method: str = "reflection") -> Iterator[tuple[str, str]]:
    """Serve `model` (one engine: the proxy's upstream and the memory's model are the same
    server) and a memory service on it; yields (service URL, a tenant key)."""
    with serve_model(model) as served:
        settings = {"memory": RoleModel(base_url=served.base_url)}
        roles = ModelRoles({"memory": served.spec}, settings=settings)
        hub = MemoryHub.open(method, db, models=roles)
        key = "rk-" + secrets.token_urlsafe(24)
        hub.store.add_tenant("demo")
        hub.store.add_key("demo", key)
        app = create_app(hub, ServiceSettings(rate_per_min=0), Upstream(served.base_url))
        with running(app) as url:
            yield url, key


def two_conversations(url: str, key: str, model: str = "model", user: str = "ada") -> list[Turn]:
    """What an app does: talk, end the conversation, wait for the memory, talk again."""
    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
    turns = []
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": FIRST}], user=user, max_tokens=200
    )
    turns.append(Turn(1, FIRST, raw.parse().choices[0].message.content or ""))
    headers = {"Authorization": f"Bearer {key}"}
    conversation = raw.headers["x-rapport-conversation"]
    job = httpx.post(f"{url}/v1/conversations/{conversation}/end", headers=headers, timeout=60)
    job.raise_for_status()
    done = httpx.get(
        f"{url}/v1/jobs/{job.json()['job']}", params={"wait": 60}, headers=headers, timeout=70
    )
    while done.json()["status"] in ("queued", "running"):
        done = httpx.get(
            f"{url}/v1/jobs/{job.json()['job']}", params={"wait": 60}, headers=headers, timeout=70
        )
    reply = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": SECOND}], user=user, max_tokens=200
    )
    turns.append(Turn(2, SECOND, reply.choices[0].message.content or ""))
    return turns
