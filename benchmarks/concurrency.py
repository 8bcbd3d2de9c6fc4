"""How many simulated users the harness drives against an OpenAI-compatible server.

A loopback server (`rapport.llm._loopback`, its own process) answers every call after
``--latency`` seconds. For each benchmark and each concurrency level C, a fresh process runs C
users (``--sessions`` sessions each, memory ``none``) through the real runner, provider and
store, and reports sessions/s, turns/s and model calls/s; ``efficiency`` is calls/s over the
ideal ``C / latency`` (every user always waiting on exactly one call). Harness CPU is this
process's user+system time (the server's is reported apart) per turn (a turn: one user message
and one agent reply) and per model call. Store commits are timed one by one (p50/p99). With
``--kill-check C`` a run at concurrency C is killed with SIGKILL mid-way, run again to the end,
and compared with an uninterrupted run session by session. Prints one JSON object.

Each provider call's start and end (as the harness sees them: from the provider being asked to
the session's task running again, so time a reply waits for a busy event loop counts) and its
user are recorded, and each row says where the wall time (``wall_s``: `Experiment.run` alone)
went:

- ``prepare_s``: `prepare_experiment` (users, problems, checks), before and outside ``wall_s``.
- ``startup_s``: from the start of ``wall_s`` to the first call (store, provenance, first turns).
- ``first_calls_s``: from that start until every user's first call has returned (ideally
  ``startup_s`` plus one latency; the burst of C connections and C first replies shows here).
- ``tail_s``: from the last moment C calls were in flight (after it, fewer are, for good) to the
  end: users that finished early, the last commits.
- ``critical_path_s``: the most calls one user made in sequence, times the latency: no harness
  finishes this exact work sooner. ``efficiency_critical`` = ``critical_path_s / wall_s``; a
  benchmark whose users make different numbers of calls (``collab``: enforcements, retries)
  cannot reach ``efficiency`` 1, but can reach ``efficiency_critical`` 1.
- ``efficiency_steady``: calls/s between the 10% and the 90% of calls completed, over
  ``C / latency``: the rate while every user is busy, without start-up and tail.
- ``mean_in_flight``: calls in flight on average (the sum of call durations over ``wall_s``);
  ``call_p50_ms``/``call_p99_ms``: call durations, against the server's ``latency``.
- ``user_calls_min_mean_max``: calls per user.
- ``cpu_share``: harness CPU over ``wall_s`` (the event loop is one thread: near 1, it is the
  bottleneck, and replies wait for it).

    python benchmarks/concurrency.py [--levels 1,8,32,128,256,512] [--benchmarks scripted,collab]
        [--latency 0.2] [--sessions 2] [--max-turns 5] [--kill-check 256] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rapport.eval import ExperimentConfig, prepare_experiment
from rapport.llm import ModelAPI, ModelRoles
from rapport.llm._lockstep import current_key
from rapport.llm._model import Completion, Request
from rapport.llm._openai import OpenAIAPI
from rapport.store import RunStore

HERE = Path(__file__).resolve()

Call = tuple[float, float, int | None]
"""One provider call: its start and end (``perf_counter``) and its user (the runner's job key)."""


def _config(bench: str, users: int, args: argparse.Namespace, run_dir: Path) -> ExperimentConfig:
    return ExperimentConfig(
        benchmark=bench,
        memory=["none"],
        users=users,
        sessions=args.sessions,
        max_turns=args.max_turns,
        run_dir=run_dir,
        concurrency=users,
        cache=False,
    )


class _TimedAPI(ModelAPI):
    """The provider, with each call's start, end and user (the runner's job key) kept."""

    def __init__(self, api: OpenAIAPI) -> None:
        self.api, self.name, self.base_url = api, api.name, api.base_url
        self.calls: list[Call] = []

    def check_ready(self) -> None:
        self.api.check_ready()

    async def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        try:
            return await self.api.complete(request)
        finally:
            self.calls.append((started, time.perf_counter(), current_key()))


def _models(base_url: str, transport: Any) -> tuple[ModelRoles, _TimedAPI]:
    # One client for every role, as `--model all=openai/...` gives (one connection pool).
    api = OpenAIAPI("loopback", base_url=base_url, max_retries=0, timeout=120, transport=transport)
    timed = _TimedAPI(api)
    return ModelRoles({"all": timed}), timed


def _timed_commits() -> tuple[list[float], list[int]]:
    """Wrap `RunStore.commit_session` to time each commit and count agent turns."""
    seconds: list[float] = []
    turns: list[int] = []
    original = RunStore.commit_session

    def commit(self: RunStore, record: Any, version: Any) -> None:
        started = time.perf_counter()
        original(self, record, version)
        seconds.append(time.perf_counter() - started)
        turns.append(sum(t.speaker == "agent" for t in record.turns))

    RunStore.commit_session = commit  # type: ignore[method-assign,assignment]
    return seconds, turns


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _tail_start(calls: list[Call], level: int, started: float) -> float:
    """When fewer than `level` calls went in flight for good: the last drop from `level`."""
    edges = sorted([(start, 1) for start, _, _ in calls] + [(end, -1) for _, end, _ in calls])
    in_flight, dropped = 0, started
    for at, step in edges:
        if in_flight == level and step < 0:
            dropped = at
        in_flight += step
    return dropped


def _timeline(
    calls: list[Call], started: float, ended: float, level: int, latency: float
) -> dict[str, Any]:
    """Where the wall time went, from each call's start, end and user."""
    if not calls:
        return {}
    wall = ended - started
    per_user: dict[int | None, list[Call]] = {}
    for call in calls:
        per_user.setdefault(call[2], []).append(call)
    counts = sorted(len(c) for c in per_user.values())
    critical = counts[-1] * latency
    ends = sorted(end for _, end, _ in calls)
    lo, hi = len(ends) // 10, max(9 * len(ends) // 10 - 1, 0)
    steady = (hi - lo) / (ends[hi] - ends[lo]) if ends[hi] > ends[lo] else 0.0
    durations = sorted(end - start for start, end, _ in calls)
    first_wave = max(min(end for _, end, _ in c) for c in per_user.values())
    return {
        "startup_s": round(min(start for start, _, _ in calls) - started, 3),
        "first_calls_s": round(first_wave - started, 3),
        "tail_s": round(ended - _tail_start(calls, level, started), 3),
        "critical_path_s": round(critical, 2),
        "efficiency_critical": round(critical / wall, 3),
        "efficiency_steady": round(steady / (level / latency), 3),
        "mean_in_flight": round(sum(durations) / wall, 1),
        "call_p50_ms": round(1000 * durations[len(durations) // 2], 1),
        "call_p99_ms": round(1000 * durations[int(0.99 * (len(durations) - 1))], 1),
        "user_calls_min_mean_max": [counts[0], round(len(calls) / len(counts), 1), counts[-1]],
    }


def one(bench: str, level: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one benchmark at one concurrency level in this process; its figures."""
    commits, turns = _timed_commits()
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(bench, level, args, Path(args.run_dir or tmp) / "run")
        models, timed = _models(args.base_url, args.transport)
        prepared = time.perf_counter()
        experiment = prepare_experiment(config, models=models)
        cpu0, started = _cpu_s(), time.perf_counter()
        result = asyncio.run(experiment.run(progress=False))
        ended = time.perf_counter()
        wall, cpu = ended - started, _cpu_s() - cpu0
    calls, n_turns = result.model_calls, sum(turns)
    ordered = sorted(commits) or [0.0]
    return {
        "benchmark": bench,
        "concurrency": level,
        "sessions": result.sessions_run,
        "errors": result.errors,
        "turns": n_turns,
        "model_calls": calls,
        "wall_s": round(wall, 2),
        "sessions_per_s": round(result.sessions_run / wall, 2),
        "turns_per_s": round(n_turns / wall, 1),
        "calls_per_s": round(calls / wall, 1),
        "ideal_calls_per_s": round(level / args.latency, 1),
        "efficiency": round(calls / wall / (level / args.latency), 3),
        "prepare_s": round(started - prepared, 2),
        **_timeline(timed.calls, started, ended, level, args.latency),
        "cpu_share": round(cpu / wall, 3),
        "cpu_ms_per_turn": round(1000 * cpu / max(n_turns, 1), 3),
        "cpu_ms_per_call": round(1000 * cpu / max(calls, 1), 3),
        "commit_p50_ms": round(1000 * statistics.median(ordered), 2),
        "commit_p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _child(args: argparse.Namespace, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, str(HERE), "--base-url", args.base_url, *extra]
    command += ["--latency", str(args.latency), "--sessions", str(args.sessions)]
    command += ["--max-turns", str(args.max_turns), "--transport", args.transport]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def _process_cpu_s(pid: int) -> float:
    """User+system CPU seconds of another process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_server(args: argparse.Namespace) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "rapport.llm._loopback", "--latency", str(args.latency)]
    command += ["--idle-timeout", "300", "--max-connections", "4096"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    args.base_url = server.stdout.readline().strip()
    return server


def _stored(run_dir: Path) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:
        return 0


def _sessions(run_dir: Path) -> dict[tuple[str, str, int], Any]:
    """Each stored session's turns, scores and status (what must not depend on a resume)."""
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        rows = conn.execute("SELECT condition, user_id, idx, body FROM sessions").fetchall()
    out = {}
    for condition, user, idx, body in rows:
        record = json.loads(body)
        turns = [(t["speaker"], t["text"]) for t in record["turns"]]
        out[(condition, user, idx)] = (turns, record["scores"], record["status"])
    return out


def kill_check(bench: str, level: int, args: argparse.Namespace) -> dict[str, Any]:
    """SIGKILL a run mid-way, resume it, compare with an uninterrupted run."""
    with tempfile.TemporaryDirectory() as tmp:
        whole, killed = Path(tmp) / "whole", Path(tmp) / "killed"
        _child(args, "--one", bench, str(level), "--run-dir", str(whole)).communicate()
        proc = _child(args, "--one", bench, str(level), "--run-dir", str(killed))
        deadline = time.monotonic() + 120
        while _stored(killed / "run") < level // 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # kill once some sessions are in, most of them in flight
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        before = len(_sessions(killed / "run"))
        _child(args, "--one", bench, str(level), "--run-dir", str(killed)).communicate()
        a, b = _sessions(whole / "run"), _sessions(killed / "run")
        return {
            "benchmark": bench,
            "concurrency": level,
            "sessions_before_kill": before,
            "sessions": len(b),
            "differing_sessions": sum(a.get(k) != v for k, v in b.items()) + len(a.keys() ^ b),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--levels", default="1,8,32,128,256,512")
    parser.add_argument("--benchmarks", default="scripted,collab")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--kill-check", type=int, default=0, metavar="C")
    parser.add_argument("--transport", choices=("sdk", "direct"), default="direct")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=2, metavar=("BENCH", "C"), help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args)))
        return
    server = _start_server(args)
    try:
        rows = []
        for bench in args.benchmarks.split(","):
            for level in (int(x) for x in args.levels.split(",")):
                server_cpu = _process_cpu_s(server.pid)
                out, _ = _child(args, "--one", bench, str(level)).communicate()
                rows.append(json.loads(out))
                spent = _process_cpu_s(server.pid) - server_cpu
                calls = max(rows[-1]["model_calls"], 1)
                rows[-1]["server_cpu_ms_per_call"] = round(1000 * spent / calls, 3)
                print(json.dumps(rows[-1]), file=sys.stderr)
        result: dict[str, Any] = {"latency_s": args.latency, "transport": args.transport}
        result["max_turns"] = args.max_turns
        result.update(sessions_per_user=args.sessions, cpus=os.cpu_count())
        result.update(load_average_at_end=[round(x, 2) for x in os.getloadavg()], rows=rows)
        if args.kill_check:
            result["kill_check"] = [kill_check(b, args.kill_check, args) for b in ["scripted"]]
    finally:
        server.terminate()
        server.wait(10)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
