"""schemathesis against the service's own OpenAPI schema: no server error and no reply that
breaks the schema, with a valid key and without one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from rapport.service import MemoryHub, ServiceSettings, Upstream, create_app
from rapport.service._serve import running

from .upstream import upstream_app

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

KEY = "rk-fuzz"


def _operations(root: Path, upstream: str) -> list[Any]:
    hub = MemoryHub.open("rag", root / "fuzz.sqlite", options={"backend": "bm25"})
    hub.store.add_tenant("fuzz")
    hub.store.add_key("fuzz", KEY)
    app = create_app(hub, ServiceSettings(worker=False, rate_per_min=0), Upstream(upstream))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize(("key", "examples"), [(KEY, 15), ("wrong", 4)])
def test_the_api_keeps_its_schema_and_never_fails(tmp_path: Path, key: str, examples: int) -> None:
    with running(upstream_app([])) as upstream:
        _fuzz(_operations(tmp_path, f"{upstream}/v1"), key, examples)


def _fuzz(operations: list[Any], key: str, examples: int) -> None:
    assert len(operations) >= 10
    for operation in operations:
        _checker(operation, key, examples)()


def _checker(operation: Any, key: str, examples: int) -> Any:
    # The proxy needs a user in the body or in X-Rapport-User, which a schema cannot say:
    # a request with neither is refused with 422 by design.
    chat = operation.path == "/v1/chat/completions"
    excluded = [positive_data_acceptance] if chat else []

    @given(case=operation.as_strategy())
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        reply = case.call_and_validate(
            headers={"Authorization": f"Bearer {key}"}, excluded_checks=excluded
        )
        assert reply.status_code < 500
        if key != KEY:
            assert reply.status_code in (401, 404, 405, 422)

    return check
