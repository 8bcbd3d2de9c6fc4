"""``--memory service``: a benchmark run against a running memory service.

The runner calls this memory as it calls any other; each call goes to the service over HTTP
(``context`` at session start, ``recall`` each turn, ``learn`` queued and waited for), so a
run measures the memory the service serves. A run with ``--memory service`` on a service that
runs method M with options O gives the sessions a run with ``--memory M`` and O gives.
"""

from __future__ import annotations

import os
import time
from typing import Any, ClassVar

import httpx
from pydantic import Field

from rapport.llm import Message, ModelRoles
from rapport.log import MemoryState, SessionInfo, SessionRecord, UserRef
from rapport.memory import BaseMemory, MemoryOptions, NotesPlacement

_ROLES = {"user": "user", "agent": "assistant", "tool": "tool", "system": "system"}


class ServiceMemory(BaseMemory):
    """The memory a running `rapport serve-memory` serves, over its HTTP API.

    Args:
        models: unused (the service calls its own models).
        url: the service's base URL.
        key_env: the environment variable that holds the tenant's API key.
        user_prefix: put before each user id (keeps runs that share a tenant apart).
    """

    name = "service"
    roles: ClassVar[tuple[str, ...] | None] = ()

    class Options(MemoryOptions):
        url: str = Field(default="http://127.0.0.1:8765", pattern=r"^https?://")
        """The service's base URL."""
        key_env: str = "RAPPORT_MEMORY_KEY"
        """The environment variable that holds the tenant's API key."""
        user_prefix: str = Field(default="", pattern=r"^[A-Za-z0-9._@:+-]{0,64}$")
        """Put before each user id, so runs that share a tenant do not share users."""
        wait_s: float = Field(default=600.0, gt=0)
        """How long to wait for a learn job to finish."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        key = os.environ.get(self.options.key_env, "")
        self._headers = {"Authorization": f"Bearer {key}"}
        self._info: dict[str, Any] | None = None

    def _url(self, user: UserRef, tail: str = "") -> str:
        return f"{self.options.url.rstrip('/')}/v1/users/{self.options.user_prefix}{user.id}{tail}"

    def _served(self) -> dict[str, Any]:
        if self._info is None:
            reply = httpx.get(
                f"{self.options.url.rstrip('/')}/v1/memory", headers=self._headers, timeout=60
            )
            reply.raise_for_status()
            self._info = reply.json()
        return self._info

    def describe(self) -> str:
        info = self._served()
        return f"service {self.options.url} ({info['method']}, {info['retrieval']})"

    def notes_in(self) -> NotesPlacement | None:
        placement = self.options.notes_in or self._served()["notes_in"]
        return placement if placement in ("system", "turn") else None

    async def _post(self, url: str, body: dict[str, Any], **headers: str) -> Any:
        async with httpx.AsyncClient(timeout=self.options.wait_s) as client:
            reply = await client.post(url, json=body, headers={**self._headers, **headers})
            reply.raise_for_status()
            return reply.json()

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        body = {"messages": [], "task": session.task}
        return str((await self._post(self._url(user, "/context"), body))["system"])

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        messages = [{"role": m.role, "content": m.content} for m in conversation]
        return str((await self._post(self._url(user, "/recall"), {"messages": messages}))["recall"])

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        messages = [{"role": _ROLES[t.speaker], "content": t.text} for t in record.turns]
        key = f"{record.condition}-{record.user_id}-{record.index}"
        job = await self._post(
            self._url(user, "/conversations"), {"messages": messages}, **{"Idempotency-Key": key}
        )
        url = f"{self.options.url.rstrip('/')}/v1/jobs/{job['job']}"
        deadline = time.monotonic() + self.options.wait_s
        async with httpx.AsyncClient(timeout=70) as client:
            while job["status"] not in ("done", "failed"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the memory service took over {self.options.wait_s} s")
                wait = {"wait": min(60.0, left)}
                reply = await client.get(url, params=wait, headers=self._headers)
                reply.raise_for_status()
                job = reply.json()
        if job["status"] == "failed":
            raise RuntimeError(f"the memory service failed to learn: {job['error']}")

    def snapshot(self, user: UserRef) -> MemoryState:
        reply = httpx.get(self._url(user), headers=self._headers, timeout=60)
        reply.raise_for_status()
        return MemoryState.model_validate(reply.json()["state"])

    def restore(self, user: UserRef, state: MemoryState) -> None:
        """Nothing to do: the service keeps each user's memory durably itself."""
