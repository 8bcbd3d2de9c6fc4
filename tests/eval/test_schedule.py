"""The runner's schedule: a user's independent sessions at once, grading aside, and the same
stored run as one played session by session (undone learning included)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rapport.envs import BENCHMARKS, SessionFailure, SessionLog
from rapport.envs.scripted import ScriptedBenchmark
from rapport.envs.scripted._benchmark import ScriptedEpisode
from rapport.eval import ExperimentConfig, run
from rapport.llm import Message, ModelRoles
from rapport.log import (
    Condition,
    MemoryItem,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    UserRef,
    UserSpec,
)
from rapport.memory import MEMORIES, BaseMemory
from rapport.store import RunStore

BOUND_S = 30.0
"""How long a session waits for another before the test fails (never reached when it passes)."""

FAIL_GRADING: set[tuple[str, int]] = set()
"""(user, session index) whose grading fails, for the benchmark below."""
EVENTS: dict[str, asyncio.Event] = {}


class GradedEpisode(ScriptedEpisode):
    """Scripted turns, then a judge call after the conversation."""

    user_id = ""

    async def finish(self, log: SessionLog) -> None:
        judge = self.models.get("judge")
        verdict = await judge.generate(
            [Message(role="user", content=f"grade {self.topic} {self.info.index}")]
        )
        log.note(f"graded {len(verdict.text)}")
        if (self.user_id, self.info.index) in FAIL_GRADING:
            raise SessionFailure("benchmark", "the judge's verdict is unreadable")


class GradedBenchmark(ScriptedBenchmark):
    """The scripted benchmark with a judge after each session."""

    name = "graded"
    roles = ("user", "judge")

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> GradedEpisode:
        info = SessionInfo(index=spec.index, benchmark=self.name, task=spec.id)
        episode = GradedEpisode(info, spec.id, user.preferences[0], models, self)
        episode.models = models
        episode.user_id = user.id
        return episode


async def _wait(name: str) -> None:
    """Wait until another session sets the event (fail the session if none does)."""
    await asyncio.wait_for(EVENTS.setdefault(name, asyncio.Event()).wait(), BOUND_S)


class MeetingEpisode(GradedEpisode):
    """u0's session 0 waits, in its grading, for u0's session 1 to start; session 1, at its
    start, for session 0's conversation to be over."""

    async def start(self, log: SessionLog) -> None:
        if self.user_id == "u0" and self.info.index == 1:
            EVENTS.setdefault("s1 started", asyncio.Event()).set()
            await _wait("s0 talked")
        await super().start(log)

    async def finish(self, log: SessionLog) -> None:
        if self.user_id == "u0" and self.info.index == 0:
            EVENTS.setdefault("s0 talked", asyncio.Event()).set()
            await _wait("s1 started")
        await super().finish(log)


class MeetingBenchmark(GradedBenchmark):
    name = "meeting"

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> GradedEpisode:
        info = SessionInfo(index=spec.index, benchmark=self.name, task=spec.id)
        episode = MeetingEpisode(info, spec.id, user.preferences[0], models, self)
        episode.models = models
        episode.user_id = user.id
        return episode


@pytest.fixture(autouse=True)
def _benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BENCHMARKS, "graded", f"{__name__}:GradedBenchmark")
    monkeypatch.setitem(BENCHMARKS, "meeting", f"{__name__}:MeetingBenchmark")
    FAIL_GRADING.clear()
    EVENTS.clear()


def _run(run_dir: Path, concurrency: int, **fields: Any) -> Path:
    config = {
        "benchmark": "graded",
        "memory": ["none", "reflection", "oracle"],
        "users": 2,
        "sessions": 4,
        "max_turns": 2,
        "seed": 7,
        "run_dir": run_dir,
        "concurrency": concurrency,
        "models": {"all": "scripted/auto"},
        **fields,
    }
    run(ExperimentConfig.model_validate(config), progress=False)
    return run_dir


def _stored(run_dir: Path) -> tuple[list[Any], list[Any]]:
    """Every session (without its time) and every memory version, in store order."""
    with RunStore.open_readonly(run_dir) as store:
        sessions = [
            r.model_dump(mode="json", exclude={"finished_at", "started_at"})
            for r in store.sessions()
        ]
        for s in sessions:
            s["usage"] = [
                (c["role"], c["prompt_tokens"], c["completion_tokens"]) for c in s["usage"]
            ]
        versions = [
            v.model_dump(mode="json", exclude={"created_at"}) for v in store.memory_versions()
        ]
    return sessions, versions


def test_a_concurrent_run_stores_what_a_run_in_order_does(tmp_path: Path) -> None:
    in_order = _stored(_run(tmp_path / "one", 1))
    at_once = _stored(_run(tmp_path / "many", 8))
    assert at_once == in_order
    sessions, versions = in_order
    assert len(sessions) == 24 and len(versions) == 24
    assert {s["status"] for s in sessions} == {"ok"}


def test_learning_ahead_of_a_failed_grade_is_undone(tmp_path: Path) -> None:
    # u0's session 1 fails its grading: played in order, reflection never learns from it,
    # so session 2 starts from the notes after session 0.
    FAIL_GRADING.add(("u0", 1))
    in_order = _stored(_run(tmp_path / "one", 1))
    at_once = _stored(_run(tmp_path / "many", 8))
    assert at_once == in_order
    sessions, versions = at_once
    failed = [s for s in sessions if s["status"] == "error"]
    assert [(s["condition"], s["user_id"], s["index"]) for s in failed] == [
        ("none", "u0", 1),
        ("oracle", "u0", 1),
        ("reflection", "u0", 1),
    ]
    notes = {(v["condition"], v["user_id"], v["version"]): v["state"] for v in versions}
    assert notes[("reflection", "u0", 2)] == notes[("reflection", "u0", 1)]
    assert notes[("reflection", "u0", 3)] != notes[("reflection", "u0", 2)]
    # Nor does the failed session carry the calls of the reflection that was undone: its
    # calls end with the judge's, where a session that learned ends with reflection's.
    reflected = [s for s in sessions if s["condition"] == "reflection" and s["status"] == "ok"]
    assert [s["usage"][-1][0] for s in reflected] == ["memory"] * 7
    assert failed[2]["usage"][-1][0] == "judge"


@pytest.mark.parametrize("memory", ["none", "reflection"])
def test_grading_runs_while_the_user_s_next_session_plays(tmp_path: Path, memory: str) -> None:
    # Session 0's grading waits for session 1 to start: played in order, it never would.
    run_dir = _run(tmp_path / "r", 2, benchmark="meeting", memory=[memory], users=1)
    sessions, _ = _stored(run_dir)
    assert [s["status"] for s in sessions] == ["ok"] * 4
    assert EVENTS["s1 started"].is_set() and EVENTS["s0 talked"].is_set()


class ScoreNotes(BaseMemory):
    """Notes each session's scores as its learn sees them (a memory that reads the grade)."""

    name = "score-notes"
    roles = ()

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        item = MemoryItem(id=f"s{record.index}", text=json.dumps(record.scores, sort_keys=True))
        self.state(user).items.append(item)


def test_a_memory_that_reads_the_grade_learns_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(MEMORIES, "score-notes", f"{__name__}:ScoreNotes")
    in_order = _stored(_run(tmp_path / "one", 1, memory=["score-notes"]))
    at_once = _stored(_run(tmp_path / "many", 4, memory=["score-notes"]))
    assert at_once == in_order
    last = at_once[1][-1]["state"]["items"]
    assert len(last) == 4 and all(json.loads(i["text"]) for i in last)
