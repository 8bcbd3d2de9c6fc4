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
from rapport.llm import ModelRoles
from rapport.llm._openai import OpenAIAPI
from rapport.store import RunStore

HERE = Path(__file__).resolve()


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


def _models(base_url: str, transport: Any) -> ModelRoles:
    # One client for every role, as `--model all=openai/...` gives (one connection pool).
    api = OpenAIAPI("loopback", base_url=base_url, max_retries=0, timeout=120, transport=transport)
    return ModelRoles({"all": api})


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

    RunStore.commit_session = commit  # type: ignore[method-assign]
    return seconds, turns


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one(bench: str, level: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one benchmark at one concurrency level in this process; its figures."""
    commits, turns = _timed_commits()
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(bench, level, args, Path(args.run_dir or tmp) / "run")
        experiment = prepare_experiment(config, models=_models(args.base_url, args.transport))
        cpu0, started = _cpu_s(), time.perf_counter()
        result = asyncio.run(experiment.run(progress=False))
        wall, cpu = time.perf_counter() - started, _cpu_s() - cpu0
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
