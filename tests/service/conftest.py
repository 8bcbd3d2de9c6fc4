"""A service on a fresh store: a hub, two tenants with keys, and an in-process client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rapport.service import MemoryHub, ServiceSettings, create_app

KEYS = {"acme": "rk-acme-key", "globex": "rk-globex-key"}


def auth(tenant: str) -> dict[str, str]:
    """The headers of a tenant's requests."""
    return {"Authorization": f"Bearer {KEYS[tenant]}"}


def said(*texts: str) -> list[dict[str, str]]:
    """A conversation: user and assistant taking turns, the user first."""
    return [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]


@pytest.fixture
def hub(tmp_path: Path) -> MemoryHub:
    """Retrieval memory (no model) on a fresh store with the two tenants."""
    hub = MemoryHub.open("rag", tmp_path / "memory.sqlite", options={"backend": "bm25"})
    for tenant, key in KEYS.items():
        hub.store.add_tenant(tenant)
        hub.store.add_key(tenant, key)
    return hub


@pytest.fixture
def client(hub: MemoryHub) -> Iterator[TestClient]:
    """The service without its background worker (tests learn with `hub.work()`)."""
    app = create_app(hub, ServiceSettings(worker=False, rate_per_min=0))
    with TestClient(app) as client:
        yield client
