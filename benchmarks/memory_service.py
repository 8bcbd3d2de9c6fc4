"""Measure the memory service: context latency at 10,000 users x 50 notes, learn jobs per
minute with the model stubbed, concurrent proxied streams, and two replicas learning one user.

Prints JSON. Everything runs on loopback and stops by itself. SQLite only (a PostgreSQL
backend is not built yet).

    python benchmarks/memory_service.py [--users 10000] [--notes 50] [--requests 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from rapport.log import MemoryItem, MemoryState
from rapport.service import ChatMessage, MemoryHub, ServiceSettings, Upstream, create_app
from rapport.service._serve import running

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "service"))
from upstream import upstream_app

KEY = "rk-bench"
HEADERS = {"Authorization": f"Bearer {KEY}"}


def _hub(path: Path, method: str = "reflection") -> MemoryHub:
    hub = MemoryHub.open(method, path, models={"all": "scripted/auto"})
    if "bench" not in hub.store.tenants():
        hub.store.add_tenant("bench")
        hub.store.add_key("bench", KEY)
    return hub


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * ordered[len(ordered) // 2], 2),
        "p95_ms": round(1000 * ordered[int(len(ordered) * 0.95)], 2),
        "mean_ms": round(1000 * statistics.fmean(ordered), 2),
    }


def context_latency(root: Path, users: int, notes: int, requests: int) -> dict[str, Any]:
    """`POST /v1/users/{user}/context` over HTTP for random users of a seeded store."""
    hub = _hub(root / "latency.sqlite")
    states = {
        f"u{u:05d}": MemoryState(
            items=[
                MemoryItem(id=f"n{i}", text=f"user {u} prefers option {i} in replies")
                for i in range(notes)
            ]
        )
        for u in range(users)
    }
    started = time.perf_counter()
    hub.store.import_memories("bench", states)
    seeded_s = time.perf_counter() - started
    rng = random.Random(0)
    body = {"messages": [{"role": "user", "content": "How should I format the answer?"}]}
    samples = []
    app = create_app(hub, ServiceSettings(rate_per_min=0, worker=False))
    with running(app) as url, httpx.Client(base_url=url, headers=HEADERS) as client:
        for _ in range(requests):
            user = f"u{rng.randrange(users):05d}"
            t = time.perf_counter()
            reply = client.post(f"/v1/users/{user}/context", json=body)
            samples.append(time.perf_counter() - t)
            assert reply.status_code == 200, reply.text
    return {
        "users": users,
        "notes_per_user": notes,
        "requests": requests,
        "seed_store_s": round(seeded_s, 1),
        "store": "sqlite",
        **_percentiles(samples),
    }


def learn_rate(root: Path, jobs: int) -> dict[str, Any]:
    """Learn jobs per minute, reflection on the scripted model (no model time)."""
    hub = _hub(root / "learn.sqlite")
    conversation = [
        ChatMessage(role="user", content="Please keep it short."),
        ChatMessage(role="assistant", content="Sure."),
    ]
    for i in range(jobs):
        hub.learn(f"u{i % 50}", conversation, tenant="bench")
    started = time.perf_counter()
    done = asyncio.run(hub.work())
    elapsed = time.perf_counter() - started
    return {
        "jobs": done,
        "seconds": round(elapsed, 2),
        "jobs_per_minute": round(60 * done / elapsed),
    }


def proxy_streams(root: Path, streams: int) -> dict[str, Any]:
    """Concurrent streamed chat completions through the proxy to a loopback upstream."""
    seen: list[dict[str, Any]] = []
    hub = _hub(root / "proxy.sqlite", method="rag")
    with running(upstream_app(seen)) as upstream:
        app = create_app(hub, ServiceSettings(rate_per_min=0), Upstream(f"{upstream}/v1"))
        with running(app) as url:

            async def one(i: int, client: httpx.AsyncClient) -> bool:
                body = {
                    "model": "m",
                    "user": f"u{i}",
                    "stream": True,
                    "messages": [{"role": "user", "content": f"hello {i}"}],
                }
                async with client.stream("POST", "/v1/chat/completions", json=body) as reply:
                    text = "".join([line async for line in reply.aiter_lines()])
                    return reply.status_code == 200 and "[DONE]" in text

            async def all_streams() -> list[bool]:
                limits = httpx.Limits(max_connections=streams)
                async with httpx.AsyncClient(
                    base_url=url, headers=HEADERS, timeout=120, limits=limits
                ) as client:
                    return await asyncio.gather(*(one(i, client) for i in range(streams)))

            started = time.perf_counter()
            ok = asyncio.run(all_streams())
            elapsed = time.perf_counter() - started
    return {"streams": streams, "errors": streams - sum(ok), "seconds": round(elapsed, 2)}


def two_replicas(root: Path, jobs: int) -> dict[str, Any]:
    """Two hubs on one store learning one user's jobs at once: versions 1..jobs, each once."""
    path = root / "replicas.sqlite"
    first = _hub(path, method="rag")
    for i in range(jobs):
        first.learn("ada", [ChatMessage(role="user", content=f"preference {i}")], tenant="bench")
    barrier = threading.Barrier(2)
    taken: list[int] = []

    def replica() -> None:
        hub = _hub(path, method="rag")
        barrier.wait()
        taken.append(asyncio.run(hub.work()))

    threads = [threading.Thread(target=replica) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = [v for v, _, _ in first.store.versions("bench", "ada")]
    final = first.store.memory("bench", "ada")
    return {
        "jobs": jobs,
        "taken_per_replica": taken,
        "versions": len(versions),
        "lost_updates": jobs - len(final.state.items),
        "contiguous": versions == list(range(1, jobs + 1)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--notes", type=int, default=50)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--streams", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        result = {
            "context": context_latency(root, args.users, args.notes, args.requests),
            "learn": learn_rate(root, args.jobs),
            "proxy_streams": proxy_streams(root, args.streams),
            "two_replicas": two_replicas(root, 40),
            "postgres": "not built: SQLite is the only backend so far",
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
