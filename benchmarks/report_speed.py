"""Time to build a report (store -> metrics -> text + self-contained HTML) for a synthetic
run of 100 sessions with ten turns each. Prints one JSON object.

    python benchmarks/report_speed.py [--users 10] [--sessions 5]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from rapport.llm import ModelCall
from rapport.log import (
    ErrorEvent,
    ExperimentConfig,
    MemoryItem,
    MemoryState,
    MemoryVersion,
    SessionRecord,
    Turn,
    UserRecord,
)
from rapport.report import build_report, render_text, write_html
from rapport.store import RunStore

CONDITIONS = ("none", "reflection")


def _session(condition: str, user: str, index: int, rng: random.Random) -> SessionRecord:
    turns = [
        Turn(index=t, speaker="user" if t % 2 == 0 else "agent", text="word " * 60)
        for t in range(20)
    ]
    events = [ErrorEvent(where="judge", message="timeout")] if rng.random() < 0.05 else []
    return SessionRecord(
        condition=condition,
        user_id=user,
        index=index,
        spec_id=f"{user}-{index}",
        turns=turns,
        events=events,
        scores={
            "task_success": float(rng.random() < 0.5),
            "turns": rng.uniform(3, 10),
            "enforcement": rng.uniform(0, 3),
        },
        usage=[
            ModelCall(role=r, model="scripted/x", prompt_tokens=400, completion_tokens=80)
            for r in ("user", "agent")
            for _ in range(10)
        ],
    )


def fill(run_dir: Path, users: int, sessions: int) -> int:
    """Write a synthetic run; returns its session count."""
    store = RunStore(run_dir)
    store.create_or_open(
        ExperimentConfig(
            benchmark="synthetic",
            memory=list(CONDITIONS),
            users=users,
            sessions=sessions,
            run_dir=run_dir,
        )
    )
    store.put_users([UserRecord(user_id=f"u{u}", spec={}) for u in range(users)])
    rng = random.Random(0)
    for condition in CONDITIONS:
        for u in range(users):
            for i in range(sessions):
                state = MemoryState(items=[MemoryItem(id=f"n{k}", text="note") for k in range(i)])
                store.commit_session(
                    _session(condition, f"u{u}", i, rng),
                    MemoryVersion(condition=condition, user_id=f"u{u}", version=i + 1, state=state),
                )
    store.close()
    return len(CONDITIONS) * users * sessions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        count = fill(run_dir, args.users, args.sessions)
        started = time.perf_counter()
        report = build_report(run_dir)
        built = time.perf_counter()
        render_text(report)
        path = write_html(report)
        done = time.perf_counter()
        html_bytes = path.stat().st_size
    print(
        json.dumps(
            {
                "sessions": count,
                "build_s": round(built - started, 3),
                "text_and_html_s": round(done - built, 3),
                "total_s": round(done - started, 3),
                "target_total_s": 3.0,
                "html_bytes": html_bytes,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
