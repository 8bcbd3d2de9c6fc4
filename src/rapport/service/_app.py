"""`rapport serve-memory`'s HTTP API: tenants by API key, users inside a tenant, learning from
a durable job queue.

FastAPI, not bare Starlette as the viewer and study use: this is an API for programs, and
FastAPI derives its OpenAPI schema from the same pydantic models that validate each
request, so the published schema cannot drift from what the service accepts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Annotated, Any

import httpx
from fastapi import FastAPI, Header, HTTPException, Path, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field

from rapport.store import IdempotencyConflict, StoreError

from ._auth import Tenant
from ._docs import docs_page
from ._hub import ChatMessage, Context, LearnReceipt, MemoryHub, receipt
from ._limits import BodyLimit, RateLimiter
from ._proxy import CONVERSATION_ID, Upstream, add_proxy

USER_ID = r"^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$"
"""What a user id may be: letters, digits and ``._@:+-``, up to 128 characters."""
UserId = Annotated[str, Path(pattern=USER_ID, description="the user, inside the tenant")]


@dataclass
class ServiceSettings:
    """How the service runs.

    Args:
        max_body: the largest request body accepted, in bytes.
        rate_per_min: requests per minute per tenant (0: no limit).
        poll_s: how often the worker looks for jobs other replicas queued or whose
            worker died (a job queued here wakes it at once).
        idle_end_s: a proxied conversation untouched this long is ended and learned
            (0: only an explicit end does).
    """

    max_body: int = 1_000_000
    rate_per_min: int = 600
    poll_s: float = 2.0
    idle_end_s: float = 0.0
    worker: bool = True
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    learned: asyncio.Condition = field(default_factory=asyncio.Condition)
    """Notified after each round of the worker (jobs long-polled with ``wait`` read again)."""


class Conversation(BaseModel):
    """A conversation sent to learn from, or to get context for."""

    messages: list[ChatMessage] = Field(max_length=2_000)
    task: str = Field(default="", max_length=2_000)
    """What the conversation is about, where the app knows it (some methods retrieve by it)."""


class Recall(BaseModel):
    """What the memory recalls for the conversation so far."""

    recall: str


class Detail(BaseModel):
    """An error: what went wrong, in one line."""

    detail: Any


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": Detail, "description": "the body is not JSON"},
    401: {"model": Detail, "description": "no valid API key"},
    404: {"model": Detail, "description": "no such job or conversation of this tenant"},
    409: {"model": Detail, "description": "an Idempotency-Key or conversation id reused"},
    413: {"model": Detail, "description": "the body is over the limit"},
    422: {"model": Detail, "description": "the request does not fit the schema"},
    429: {"model": Detail, "description": "over the tenant's rate; see Retry-After"},
    502: {"model": Detail, "description": "the upstream model cannot be reached"},
    503: {"model": Detail, "description": "the memory store is unavailable"},
}
"""Every error the service answers with, documented on every route."""


class UserEntry(BaseModel):
    """A user of the tenant and their memory version."""

    user: str
    version: int


class Forgotten(BaseModel):
    """What `DELETE /v1/users/{user}` removed."""

    user: str
    deleted_rows: int
    remaining_rows: int


def create_app(
    hub: MemoryHub, settings: ServiceSettings | None = None, upstream: Upstream | None = None
) -> FastAPI:
    """The service's app on a hub (its worker runs inside the app's lifespan); with an
    upstream model endpoint, the OpenAI-compatible proxy too."""
    settings = settings or ServiceSettings()
    clients: list[httpx.AsyncClient] = []

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(_worker(hub, settings)) if settings.worker else None
        yield
        if task is not None:
            task.cancel()
        for client in clients:
            await client.aclose()

    app = FastAPI(
        title="rapport memory service",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        responses=ERRORS,
    )
    app.state.hub, app.state.settings = hub, settings
    app.add_middleware(BodyLimit, max_body=settings.max_body)
    app.state.limiter = RateLimiter(settings.rate_per_min)
    _routes(app, hub, settings)
    if upstream is not None:
        clients.append(add_proxy(app, hub, upstream))
    _errors(app)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))

    return app


def _routes(app: FastAPI, hub: MemoryHub, settings: ServiceSettings) -> None:
    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/users", response_model=list[UserEntry])
    def list_users(tenant: Tenant) -> list[UserEntry]:
        """The tenant's users with a memory, and its version."""
        return [UserEntry(user=u, version=v) for u, v in hub.store.users(tenant)]

    @app.get("/v1/users/{user}")
    def export_user(user: UserId, tenant: Tenant) -> dict[str, Any]:
        """Everything kept of the user: memory now, every version, jobs not yet learned."""
        return hub.export(user, tenant=tenant)

    @app.get("/v1/users/{user}/versions")
    def user_versions(user: UserId, tenant: Tenant) -> list[dict[str, Any]]:
        """Every version of the user's memory, oldest first."""
        return hub.versions(user, tenant=tenant)

    @app.post("/v1/users/{user}/context", response_model=Context)
    async def user_context(user: UserId, body: Conversation, tenant: Tenant) -> Context:
        """What goes into the prompt before the next reply to this conversation."""
        return await hub.context(user, body.messages, tenant=tenant, task=body.task)

    @app.post("/v1/users/{user}/recall", response_model=Recall)
    async def user_recall(user: UserId, body: Conversation, tenant: Tenant) -> Recall:
        """What the memory recalls for the conversation so far (a per-turn call)."""
        return Recall(recall=await hub.recall(user, body.messages, tenant=tenant))

    @app.get("/v1/memory")
    def memory_info(tenant: Tenant) -> dict[str, Any]:
        """The memory method this service runs, with its options."""
        return hub.describe()

    @app.post(
        "/v1/users/{user}/conversations",
        response_model=LearnReceipt,
        status_code=202,
        responses={200: {"model": LearnReceipt, "description": "accepted before, same key"}},
    )
    async def learn(
        user: UserId,
        body: Conversation,
        tenant: Tenant,
        response: Response,
        idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    ) -> LearnReceipt:
        """Queue a finished conversation to learn from; poll `GET /v1/jobs/{job}` for the
        version it produces."""
        accepted = hub.learn(user, body.messages, tenant=tenant, idempotency_key=idempotency_key)
        settings.wake.set()
        if not accepted.created:
            response.status_code = 200
        return accepted

    @app.get("/v1/jobs/{job}", response_model=LearnReceipt)
    async def job(
        job: Annotated[int, Path(ge=1, le=2**62)],
        tenant: Tenant,
        wait: Annotated[float, Query(ge=0, le=60)] = 0,
    ) -> LearnReceipt:
        """A learn job: queued, running, done (with the version it made) or failed. With
        ``wait``, answers once the job is finished or after that many seconds."""
        deadline = time.monotonic() + wait
        while True:
            found = hub.job(job, tenant=tenant)
            if found is None:
                raise HTTPException(404, "no such job")
            left = deadline - time.monotonic()
            if found.status in ("done", "failed") or left <= 0:
                return found
            async with settings.learned:
                with suppress(TimeoutError):
                    await asyncio.wait_for(settings.learned.wait(), min(left, settings.poll_s))

    @app.post("/v1/conversations/{conversation}/end", response_model=LearnReceipt, status_code=202)
    async def end(
        conversation: Annotated[str, Path(pattern=CONVERSATION_ID.pattern)], tenant: Tenant
    ) -> LearnReceipt:
        """End a proxied conversation: it is queued to learn from."""
        job = hub.store.end(tenant, conversation)
        if job is None:
            raise HTTPException(404, "no open conversation of that id")
        settings.wake.set()
        return receipt(job)

    @app.delete("/v1/users/{user}", response_model=Forgotten)
    def forget(user: UserId, tenant: Tenant) -> Forgotten:
        """Delete everything of the user; `remaining_rows` is checked to be 0."""
        deleted = hub.forget(user, tenant=tenant)
        return Forgotten(
            user=user, deleted_rows=deleted, remaining_rows=hub.store.holds(tenant, user)
        )


def _errors(app: FastAPI) -> None:
    @app.exception_handler(IdempotencyConflict)
    async def conflict(_request: Request, exc: IdempotencyConflict) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(httpx.HTTPError)
    async def upstream_error(_request: Request, exc: httpx.HTTPError) -> JSONResponse:
        return JSONResponse(
            {"detail": f"the upstream model cannot be reached: {type(exc).__name__}"},
            status_code=502,
        )

    @app.exception_handler(StoreError)
    async def store_error(_request: Request, exc: StoreError) -> JSONResponse:
        return JSONResponse({"detail": "the memory store is unavailable"}, status_code=503)


async def _worker(hub: MemoryHub, settings: ServiceSettings) -> None:
    """Learn queued jobs as they come; look again every `poll_s` for jobs queued by other
    replicas, leases run out, and idle proxied conversations."""
    while True:
        settings.wake.clear()
        try:
            if settings.idle_end_s > 0:
                for tenant, conversation in hub.store.idle(time.time() - settings.idle_end_s):
                    hub.store.end(tenant, conversation)
            await hub.work()
        except StoreError:
            pass  # the store is unreachable now; the next round tries again
        async with settings.learned:
            settings.learned.notify_all()
        with suppress(TimeoutError):
            await asyncio.wait_for(settings.wake.wait(), settings.poll_s)
