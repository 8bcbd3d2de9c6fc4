"""The Python API: learn durably, context from what was learned, versions, export, forget."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from rapport.service import ChatMessage, MemoryHub
from rapport.store import IdempotencyConflict, ServiceStore

from .conftest import said


def _chat(*texts: str) -> list[ChatMessage]:
    return [ChatMessage.model_validate(m) for m in said(*texts)]


async def test_what_a_user_said_comes_back_as_context_after_learning(hub: MemoryHub) -> None:
    receipt = hub.learn("ada", _chat("Always answer in bullet points, please.", "Noted."))
    assert receipt.status == "queued"
    assert (await hub.context("ada", _chat("Explain recursion"))).version == 0
    assert await hub.work() == 1
    done = hub.job(receipt.job)
    assert done is not None and (done.status, done.version) == ("done", 1)
    context = await hub.context("ada", _chat("How should the answer look? bullet points?"))
    assert context.version == 1
    assert "Always answer in bullet points" in context.recall


async def test_an_idempotency_key_learns_once_and_refuses_another_request(hub: MemoryHub) -> None:
    first = hub.learn("ada", _chat("I like short answers."), idempotency_key="k-1")
    again = hub.learn("ada", _chat("I like short answers."), idempotency_key="k-1")
    assert (again.job, again.created) == (first.job, False)
    with pytest.raises(IdempotencyConflict):
        hub.learn("ada", _chat("Something else."), idempotency_key="k-1")
    assert await hub.work() == 1
    assert [v["version"] for v in hub.versions("ada")] == [1]


async def test_forget_removes_every_row_of_the_user_and_no_other(hub: MemoryHub) -> None:
    for user in ("ada", "bob"):
        hub.learn(user, _chat(f"{user} prefers tables."), idempotency_key=f"{user}-1")
    await hub.work()
    hub.learn("ada", _chat("Still queued."))
    assert hub.forget("ada") > 0
    assert hub.store.holds("default", "ada") == 0
    assert hub.export("ada")["version"] == 0
    assert (await hub.context("ada", _chat("tables?"))).recall == ""
    assert "bob prefers tables" in (await hub.context("bob", _chat("tables?"))).recall


async def test_a_worker_that_dies_before_finishing_leaves_the_job_to_another(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.sqlite"
    dying = MemoryHub.open("rag", path, options={"backend": "bm25"}, lease_s=0.0)
    receipt = dying.learn("ada", _chat("Use numbered steps."))
    claimed = dying.store.claim(lease_s=0.0)  # claimed, then the process "dies"
    assert claimed is not None and claimed.id == receipt.job
    other = MemoryHub.open("rag", path, options={"backend": "bm25"})
    assert await other.work() == 1
    job = other.job(receipt.job)
    assert job is not None and (job.status, job.version) == ("done", 1)
    assert other.store.claim(lease_s=60) is None
    assert [v["version"] for v in other.versions("ada")] == [1]


def test_two_replicas_learning_one_user_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    first = MemoryHub.open("rag", path, options={"backend": "bm25"})
    for i in range(12):
        first.learn("ada", _chat(f"Preference number {i}."))
    barrier = threading.Barrier(2)

    def replica() -> None:
        hub = MemoryHub.open("rag", path, options={"backend": "bm25"})
        barrier.wait()
        asyncio.run(hub.work())

    threads = [threading.Thread(target=replica) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = ServiceStore(path)
    versions = store.versions("default", "ada")
    assert [v for v, _, _ in versions] == list(range(1, 13))
    items = [i.text for i in versions[-1][2].items]
    assert sorted(items) == sorted(f"user: Preference number {i}." for i in range(12))
