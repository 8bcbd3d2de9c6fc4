"""The memory service's Python API: one memory method over a durable store, per user.

`MemoryHub` runs a registered memory method (the same classes and calls the benchmark
runner uses: ``restore`` → ``context``/``recall``/``learn`` → ``snapshot``) against a
`ServiceStore`. Learning is a queued job; `MemoryHub.work` learns queued jobs one by one,
each committed with a version check, so no update is lost when several processes share one
store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rapport.llm import Message, ModelRoles
from rapport.log import MemoryState, SessionInfo, SessionRecord, Turn, UserRef
from rapport.memory import Memory, create_memory
from rapport.store import ServiceJob as Job
from rapport.store import ServiceStore, StoreError, VersionConflict

BENCHMARK = "service"
"""What a memory is told the session is part of (`SessionInfo.benchmark`)."""
MAX_ATTEMPTS = 3
"""How often a learn job is tried before it is failed for good."""

_SPEAKERS: dict[str, Literal["user", "agent"]] = {"user": "user", "assistant": "agent"}


class ChatMessage(BaseModel):
    """One message of a conversation, as chat APIs write it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = Field(default="", max_length=100_000)


class Context(BaseModel):
    """What goes into the agent's prompt for a user before a reply."""

    version: int
    """The memory version it was read from (0: nothing learned yet)."""
    system: str
    """The memory's session context, for the system prompt ("" if none)."""
    recall: str
    """What the memory recalls for the conversation so far ("" if none)."""
    recall_in: Literal["system", "turn"]
    """Where the recall goes: the system prompt, or a system message after the latest
    message."""


class LearnReceipt(BaseModel):
    """An accepted learn job."""

    job: int
    status: Literal["queued", "running", "done", "failed"]
    version: int | None = None
    """The memory version the job produced, once done."""
    error: str = ""
    created: bool = True
    """False: an earlier request with the same idempotency key accepted it."""


def receipt(job: Job, created: bool = True) -> LearnReceipt:
    """A job as the API reports it."""
    return LearnReceipt(
        job=job.id, status=job.status, version=job.version, error=job.error, created=created
    )


def session_record(
    user_id: str, index: int, job: int, conversation: Sequence[ChatMessage]
) -> SessionRecord:
    """A finished conversation as the session record a memory learns from."""
    turns = [
        Turn(index=i, speaker=_SPEAKERS[m.role], text=m.content)
        for i, m in enumerate(m for m in conversation if m.role in _SPEAKERS)
    ]
    return SessionRecord(
        condition=BENCHMARK,
        user_id=user_id,
        index=index,
        spec_id=f"job-{job}",
        turns=turns,
        memory_version=index,
        finished_at=time.time(),
    )


@dataclass
class MemoryHub:
    """A memory method serving many users of many tenants from one store.

    Args:
        memory: the memory method (see `MemoryHub.open`).
        store: where memories, versions and jobs live.
        lease_s: how long a claimed job is held before another worker may take it.
    """

    memory: Memory
    store: ServiceStore
    lease_s: float = 600.0
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict, repr=False)

    @classmethod
    def open(
        cls,
        method: str,
        store: Path | str,
        *,
        models: ModelRoles | Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
        lease_s: float = 600.0,
    ) -> MemoryHub:
        """A hub on a registered memory method (``reflection``, ``facts``, ``rag`` ...).

        Args:
            method: the memory's registered name.
            store: the SQLite file (created when missing).
            models: role -> model spec (the method asks for ``memory``), or ready roles.
            options: the method's options, as ``memory_options`` gives them in a run.

        Raises:
            rapport.memory.UnknownMemoryError: an unknown method.
            pydantic.ValidationError: an unknown option or a bad value.
        """
        roles = models if isinstance(models, ModelRoles) else ModelRoles(dict(models or {}))
        memory = create_memory(method, roles, **dict(options or {}))
        return cls(memory, ServiceStore(Path(store)), lease_s)

    def _ref(self, tenant: str, user: str) -> UserRef:
        # Memories keep per-user state by id: the tenant is part of it, so no state is shared.
        return UserRef(id=f"{tenant}/{user}")

    def _lock(self, tenant: str, user: str) -> asyncio.Lock:
        return self._locks.setdefault(f"{tenant}/{user}", asyncio.Lock())

    async def context(
        self,
        user: str,
        conversation: Sequence[ChatMessage] = (),
        *,
        tenant: str = "default",
        task: str = "",
    ) -> Context:
        """The memory's session context, and its recall for a reply to `conversation`
        (none for an empty one). `task` is a short public description of what the
        conversation is about, where the app knows it."""
        async with self._lock(tenant, user):
            current = self.store.memory(tenant, user)
            ref = self._ref(tenant, user)
            self.memory.restore(ref, current.state)
            info = SessionInfo(index=current.version, benchmark=BENCHMARK, task=task)
            system = await self.memory.context(ref, info)
            recall = await self.memory.recall(ref, _messages(conversation)) if conversation else ""
        placement = self.memory.notes_in() or "turn"
        return Context(version=current.version, system=system, recall=recall, recall_in=placement)

    async def recall(
        self, user: str, conversation: Sequence[ChatMessage], *, tenant: str = "default"
    ) -> str:
        """What the memory recalls for the conversation so far, alone (a per-turn call:
        the session context is not built again)."""
        async with self._lock(tenant, user):
            current = self.store.memory(tenant, user)
            ref = self._ref(tenant, user)
            self.memory.restore(ref, current.state)
            return await self.memory.recall(ref, _messages(conversation))

    def describe(self) -> dict[str, Any]:
        """The method served: its name, options as it runs with them, where its text goes."""
        return {
            "method": self.memory.name,
            "options": self.memory.effective_options(),
            "notes_in": self.memory.notes_in(),
            "retrieval": self.memory.describe(),
        }

    def learn(
        self,
        user: str,
        conversation: Sequence[ChatMessage],
        *,
        tenant: str = "default",
        idempotency_key: str | None = None,
    ) -> LearnReceipt:
        """Accept a finished conversation to learn from (durably queued; `work` learns it).

        Raises:
            rapport.store.IdempotencyConflict: the key was used for another request.
        """
        body = [m.model_dump() for m in conversation]
        job, created = self.store.enqueue(tenant, user, body, idempotency_key)
        return receipt(job, created)

    def job(self, job_id: int, *, tenant: str = "default") -> LearnReceipt | None:
        """A job of the tenant's, as it stands (None: no such job for this tenant)."""
        job = self.store.job(tenant, job_id)
        return None if job is None else receipt(job)

    async def work(self, limit: int | None = None) -> int:
        """Learn queued jobs until none is left (or `limit` were taken); returns how many
        were taken."""
        taken = 0
        while limit is None or taken < limit:
            job = self.store.claim(self.lease_s)
            if job is None:
                break
            taken += 1
            await self._learn(job)
        return taken

    async def _learn(self, job: Job) -> None:
        async with self._lock(job.tenant, job.user_id):
            current = self.store.memory(job.tenant, job.user_id)
            ref = self._ref(job.tenant, job.user_id)
            conversation = [ChatMessage.model_validate(m) for m in job.conversation]
            record = session_record(ref.id, current.version, job.id, conversation)
            try:
                self.memory.restore(ref, current.state)
                await self.memory.learn(ref, record)
                state = self.memory.snapshot(ref)
            except Exception as exc:  # a model or method failure: tried again, then failed
                message = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                self.store.fail(job, message, retry=job.attempts < MAX_ATTEMPTS)
                return
            try:
                self.store.finish(job, current.version, state)
            except VersionConflict:
                # Another worker wrote this user first (or the user was forgotten): learn
                # again from the newer version, unless the job is gone.
                self.store.fail(job, "the memory moved on; learning again", retry=True)

    def versions(self, user: str, *, tenant: str = "default") -> list[dict[str, Any]]:
        """Every version of the user's memory, oldest first, with its items."""
        return [
            {"version": v, "created": created, "items": [i.model_dump() for i in state.items]}
            for v, created, state in self.store.versions(tenant, user)
        ]

    def export(self, user: str, *, tenant: str = "default") -> dict[str, Any]:
        """All that is kept of the user: memory now, every version, jobs not yet learned."""
        current = self.store.memory(tenant, user)
        return {
            "user": user,
            "version": current.version,
            "state": current.state.model_dump(mode="json"),
            "versions": self.versions(user, tenant=tenant),
            "pending_jobs": self.store.pending(tenant, user),
        }

    def forget(self, user: str, *, tenant: str = "default") -> int:
        """Delete everything of the user (the method's in-process state too); returns the
        rows deleted.

        Raises:
            StoreError: something of the user is still stored afterwards.
        """
        deleted = self.store.forget(tenant, user)
        self.memory.restore(self._ref(tenant, user), MemoryState())
        if self.store.holds(tenant, user):
            raise StoreError(f"{user}: rows remain after forgetting")
        return deleted


def _messages(conversation: Sequence[ChatMessage]) -> list[Message]:
    return [Message(role=m.role, content=m.content) for m in conversation]
