"""Load on ``rapport study serve``: N simulated participants at once over HTTP on loopback,
each consenting, then chatting through every session (two messages each, every reply
awaited on the page's event stream), ending it and filling its survey, against a server in
its own process whose agent and memory are ``scripted/auto`` (no model time).

With ``--long N`` one more participant's first session holds N stored messages (4,000 is
the cap: 2,000 each way), and a client fetches that session's page and its whole event
stream in a loop while the others work: ``page_ms`` is then the others' latency while one
long session is being read and rendered, and ``long_page_ms`` that session's own.

Prints one JSON object: participants, messages sent and acknowledged, errors (HTTP statuses
other than the expected ones, and exceptions), lost (acknowledged messages or answered
surveys missing from the study's database, or sessions missing from its run store), page
latency (every request: p50, p95, max in ms) and reply latency (message sent -> agent reply
seen). Stops by itself: each participant gives up at ``--deadline`` seconds.

    python benchmarks/study_load.py [--participants 50] [--sessions 12] [--deadline 600]
        [--long 4000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from rapport.store import RunStore
from rapport.study import SessionKey, StudyDB, create_study

DESIGN = Path(__file__).parents[1] / "docs" / "study-design.yaml"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')
_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")
ITEMS = ("adherence", "memory", "confidence", "satisfaction")


@dataclass
class Tally:
    pages: list[float] = field(default_factory=list)
    replies: list[float] = field(default_factory=list)
    acked: list[tuple[str, int, str]] = field(default_factory=list)
    surveys: int = 0
    errors: list[str] = field(default_factory=list)


async def _timed(tally: Tally, call, *args, ok=(200, 303), **kwargs) -> httpx.Response:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    response: httpx.Response = await call(*args, **kwargs)
    tally.pages.append(time.perf_counter() - start)
    if response.status_code not in ok:
        tally.errors.append(f"{response.status_code} {args[0]}")
    return response


async def _reply(client: httpx.AsyncClient, path: str, after: int) -> bool:
    async with client.stream("GET", f"{path}/events?after={after}") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: ") and '"speaker": "agent"' in line:
                return True
    return False


async def _session(client: httpx.AsyncClient, base: str, pos: int, csrf: str, t: Tally) -> None:
    path = f"{base}/s/{pos}"
    await _timed(t, client.get, path)
    for n in range(2):
        text = f"participant {base[-6:]} session {pos} message {n}"
        sent = time.perf_counter()
        r = await _timed(
            t, client.post, f"{path}/message", data={"csrf": csrf, "text": text},
            headers={"accept": "application/json"}, ok=(200,),
        )  # fmt: skip
        if r.status_code != 200:
            return
        t.acked.append((base, pos, text))
        for _ in range(20):
            if await _reply(client, path, r.json()["stored"]):
                break
        else:
            t.errors.append(f"no reply {path}")
        t.replies.append(time.perf_counter() - sent)
    await _timed(t, client.post, f"{path}/end", data={"csrf": csrf})
    ratings = {i: "4" for i in ITEMS} | {"impact": "followed_helped"}
    await _timed(t, client.post, f"{path}/survey", data={"csrf": csrf, **ratings, "feedback": "ok"})
    t.surveys += 1
    for _ in range(500):
        page = await _timed(t, client.get, path)
        if "This session is complete" in page.text:
            return
        await asyncio.sleep(0.05)
    t.errors.append(f"never saved {path}")


async def _participant(url: str, token: str, sessions: int, t: Tally) -> None:
    base = f"/p/{token}"
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        try:
            home = await _timed(t, client.get, base)
            csrf = _CSRF.search(home.text).group(1)  # type: ignore[union-attr]
            await _timed(t, client.post, f"{base}/consent", data={"csrf": csrf, "agree": "yes"})
            for pos in range(1, sessions + 1):
                await _session(client, base, pos, csrf, t)
        except Exception as exc:  # counted, never fatal: the benchmark reports it
            t.errors.append(f"{type(exc).__name__}: {exc}")


def _server(study_dir: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rapport", "study", "serve", str(study_dir), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    found = _URL.search(proc.stderr.readline())
    if not found:
        proc.kill()
        raise SystemExit("the study server did not start")
    return proc, f"http://127.0.0.1:{found.group(1)}"


def _lost(study_dir: Path, t: Tally, tokens: dict[str, str], sessions: int) -> int:
    by_token = {f"/p/{v}": k for k, v in tokens.items()}
    db = StudyDB(study_dir)
    try:
        stored = db.as_json()
        counts = db.counts()
    finally:
        db.close()
    texts = {m["text"] for m in json.loads(stored)["messages"]}
    lost = sum(text not in texts for _base, _pos, text in t.acked)
    lost += max(0, t.surveys - counts["surveys"])
    with RunStore.open_readonly(study_dir) as store:
        committed = store.session_count()
    lost += max(0, len(by_token) * sessions - committed) if not t.errors else 0
    return lost


def _ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


async def _drive(
    url: str, tokens: dict[str, str], sessions: int, deadline: float, long: str | None
) -> tuple[Tally, Tally]:
    tally, reader = Tally(), Tally()
    jobs = [_participant(url, token, sessions, tally) for token in tokens.values()]
    stop = asyncio.Event()
    hammer = asyncio.ensure_future(_read_long(url, long, reader, stop)) if long else None
    try:
        await asyncio.wait_for(asyncio.gather(*jobs), deadline)
    except TimeoutError:
        tally.errors.append(f"deadline of {deadline}s reached")
    finally:
        stop.set()
        if hammer is not None:
            await hammer
    return tally, reader


async def _read_long(url: str, token: str, t: Tally, stop: asyncio.Event) -> None:
    """Fetch the long session's page and its whole event stream until told to stop."""
    base = f"/p/{token}"
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        try:
            home = await _timed(t, client.get, base)
            csrf = _CSRF.search(home.text).group(1)  # type: ignore[union-attr]
            await _timed(t, client.post, f"{base}/consent", data={"csrf": csrf, "agree": "yes"})
            t.pages.clear()
            while not stop.is_set():
                page = await _timed(t, client.get, f"{base}/s/1")
                if "message 3999" not in page.text:
                    t.errors.append("the long page lacks its last message")
                start = time.perf_counter()
                async with client.stream("GET", f"{base}/s/1/events?after=-1") as stream:
                    said = [line async for line in stream.aiter_lines() if line.startswith("data")]
                t.replies.append(time.perf_counter() - start)
                if len(said) < 4000:
                    t.errors.append(f"the long stream sent {len(said)} events")
        except Exception as exc:  # counted, never fatal
            t.errors.append(f"{type(exc).__name__}: {exc}")


def _seed_long(study_dir: Path, participant: str, messages: int) -> None:
    """The participant's first session, holding ``messages`` stored messages."""
    db = StudyDB(study_dir)
    try:
        first = db.assignments()[-1].blocks[0]
        key = SessionKey(participant, first.condition, first.first)
        said = [
            ("user" if i % 2 == 0 else "agent", f"message {i}: **some** text")
            for i in range(messages)
        ]
        db.add_messages(key, said)  # type: ignore[arg-type]
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=12, help="sessions per participant (1-12)")
    parser.add_argument("--deadline", type=float, default=600.0)
    parser.add_argument("--long", type=int, default=0, help="messages in one more session")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rapport-study-load-") as tmp:
        extra = 1 if args.long else 0
        made = create_study(
            DESIGN, args.participants + extra, Path(tmp) / "study", models={"all": "scripted/auto"}
        )
        tokens = dict(made.tokens)
        long = None
        if args.long:
            participant = list(tokens)[-1]
            long = tokens.pop(participant)
            _seed_long(made.study_dir, participant, args.long)
        proc, url = _server(made.study_dir)
        started = time.perf_counter()
        try:
            tally, reader = asyncio.run(_drive(url, tokens, args.sessions, args.deadline, long))
        finally:
            wall = time.perf_counter() - started
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
        lost = _lost(made.study_dir, tally, tokens, args.sessions)
    print(
        json.dumps(
            {
                "participants": args.participants,
                "sessions_each": args.sessions,
                "messages": len(tally.acked),
                "surveys": tally.surveys,
                "requests": len(tally.pages),
                "errors": len(tally.errors),
                "first_errors": tally.errors[:5],
                "lost": lost,
                "page_ms": {"p50": _ms(tally.pages, 0.5), "p95": _ms(tally.pages, 0.95),
                            "max": _ms(tally.pages, 1.0)},
                "reply_ms": {"p50": _ms(tally.replies, 0.5), "p95": _ms(tally.replies, 0.95),
                             "max": _ms(tally.replies, 1.0)},
                "long_session_messages": args.long,
                "long_page_ms": {"p50": _ms(reader.pages, 0.5), "p95": _ms(reader.pages, 0.95),
                                 "max": _ms(reader.pages, 1.0), "fetches": len(reader.pages)},
                "long_stream_ms": {"p50": _ms(reader.replies, 0.5),
                                   "p95": _ms(reader.replies, 0.95)},
                "long_errors": reader.errors[:5],
                "wall_s": round(wall, 1),
            },
            indent=2,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
