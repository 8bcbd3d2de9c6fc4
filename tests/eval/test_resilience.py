"""Whatever breaks inside a session is recorded on it; the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_fakes import NotesMemory, aware_reply

from rapport.eval import ExperimentConfig, run_experiment
from rapport.llm import ModelRoles, ScriptedAPI
from rapport.log import MemoryItem, MemoryState, SessionRecord
from rapport.memory import MEMORIES, UserRef
from rapport.store import RunStore

pytestmark = pytest.mark.usefixtures("registered")


class BadTextMemory(NotesMemory):
    """Keeps a lone surrogate in its state: no JSON encoder takes it."""

    name = "badtext"

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        self.state(user).items.append(MemoryItem(id=f"b{record.index}", text="ok \ud83d"))


class NoSnapshotMemory(NotesMemory):
    """Cannot say what it holds."""

    name = "nosnapshot"

    def snapshot(self, user: UserRef) -> MemoryState:
        raise RecursionError("maximum recursion depth exceeded")


def _run_config(run_dir: Path, memory: str) -> ExperimentConfig:
    return ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "memory": [memory],
            "users": 2,
            "sessions": 3,
            "max_turns": 2,
            "run_dir": run_dir,
        }
    )


@pytest.mark.parametrize(
    ("memory", "where"), [("badtext", "store"), ("nosnapshot", "memory.snapshot")]
)
async def test_a_session_the_store_cannot_take_is_kept_as_an_error_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory: str, where: str
) -> None:
    cls = BadTextMemory if memory == "badtext" else NoSnapshotMemory
    monkeypatch.setitem(MEMORIES, memory, f"{__name__}:{cls.__name__}")
    models = ModelRoles({"all": ScriptedAPI(responder=aware_reply)})
    result = await run_experiment(_run_config(tmp_path, memory), models=models, progress=False)
    assert result.sessions_run == 6 and result.errors == 6
    with RunStore(tmp_path, create=False) as store:
        records = store.sessions()
    assert len(records) == 6
    for record in records:
        (error,) = record.events_of("error")
        assert error.where == where and error.error_type and error.message
