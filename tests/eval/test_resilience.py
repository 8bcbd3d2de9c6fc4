"""Whatever breaks inside a session is recorded on it; the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_fakes import NotesMemory, aware_reply

from rapport.cli import main
from rapport.eval import ExperimentConfig, ProviderOutage, run_experiment
from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent, MemoryItem, MemoryState, SessionRecord
from rapport.memory import MEMORIES, UserRef
from rapport.report import build_report, render_text
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
        (error,) = record.events_of(ErrorEvent)
        assert error.where == where and error.error_type and error.message


class Switch:
    """A provider that fails (like a server that is down) while ``down`` is set."""

    def __init__(self) -> None:
        self.down = False
        self.name = "scripted/switch"

    def reply(self, request: Request) -> str:
        if self.down:
            raise ModelError("connection refused")
        return aware_reply(request)


def _switch_models(switch: Switch) -> ModelRoles:
    return ModelRoles({"all": ScriptedAPI(responder=switch.reply, name=switch.name)})


def _scores(run_dir: Path) -> list[tuple[str, str, int, str, dict[str, float]]]:
    with RunStore(run_dir, create=False) as store:
        return [(r.condition, r.user_id, r.index, r.status, r.scores) for r in store.sessions()]


async def test_an_outage_stops_the_run_and_resume_retries_its_error_sessions(
    tmp_path: Path,
) -> None:
    config = _run_config(tmp_path / "flaky", "notes").model_copy(update={"users": 3})
    switch = Switch()
    switch.down = True
    with pytest.raises(ProviderOutage, match="3 sessions in a row"):
        await run_experiment(config, models=_switch_models(switch), progress=False, max_failures=3)
    assert 0 < len(_scores(tmp_path / "flaky")) < 9
    kept = await run_experiment(
        config, models=_switch_models(switch), progress=False, max_failures=0, retry_errors=False
    )
    assert kept.errors == kept.sessions_run > 0  # still down; errors kept and new ones made
    switch.down = False
    resumed = await run_experiment(config, models=_switch_models(switch), progress=False)
    assert resumed.errors == 0 and resumed.retried == 9
    clean = config.model_copy(update={"run_dir": tmp_path / "clean"})
    await run_experiment(clean, models=_switch_models(Switch()), progress=False)
    assert _scores(tmp_path / "flaky") == _scores(tmp_path / "clean")


async def test_errors_from_the_middle_are_retried_from_the_memory_before_them(
    tmp_path: Path,
) -> None:
    switch = Switch()
    calls = {"n": 0}

    def reply(request: Request) -> str:
        calls["n"] += 1
        if 5 <= calls["n"] <= 6:  # a session after the first fails
            raise ModelError("timeout")
        return switch.reply(request)

    config = _run_config(tmp_path / "a", "notes").model_copy(update={"users": 1, "sessions": 5})
    models = ModelRoles({"all": ScriptedAPI(responder=reply, name=switch.name)})
    first = await run_experiment(config, models=models, progress=False)
    assert first.errors >= 1
    again = await run_experiment(config, models=_switch_models(switch), progress=False)
    assert again.errors == 0 and again.sessions_skipped >= 1 and again.retried >= 1
    clean = config.model_copy(update={"run_dir": tmp_path / "b"})
    await run_experiment(clean, models=_switch_models(Switch()), progress=False)
    assert _scores(tmp_path / "a") == _scores(tmp_path / "b")


async def test_a_session_that_fails_the_same_way_is_kept_after_its_attempts(
    tmp_path: Path,
) -> None:
    config = _run_config(tmp_path, "forgetful").model_copy(update={"users": 1})
    runs = [await run_experiment(config, progress=False) for _ in range(4)]
    assert [r.sessions_run for r in runs] == [3, 3, 3, 0]
    assert [r.retried for r in runs] == [0, 3, 3, 0]
    assert [r.exhausted for r in runs] == [0, 0, 3, 3]
    assert runs[-1].error_sessions == 3
    with RunStore(tmp_path, create=False) as store:
        assert set(store.attempts(errors=True).values()) == {3}
    report = build_report(tmp_path)
    assert [(e.session, e.attempts) for e in report.repeated_errors] == [(0, 3), (1, 3), (2, 3)]
    line = render_text(report).splitlines()[-1]
    assert line.startswith("Error sessions played more than once: 3 (forgetful/u0/0 (3 times)")
    more = await run_experiment(config, progress=False, max_attempts=4)  # a higher limit
    assert more.retried == more.sessions_run == 3 and more.exhausted == 3


def test_the_cli_says_which_error_sessions_it_keeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "scripted", "--memory", "forgetful", "--users", "1", "--sessions", "2"]
    argv += ["--max-turns", "2", "--run-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--max-attempts", "1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "rapport: the run ended with 2 error sessions; 2 of them reached --max-attempts 1 "
        "and are kept as they are (a higher --max-attempts runs them again)"
    )
    assert main([*argv, "--max-attempts", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rapport: --max-attempts must be a whole number from 0 to 1000000, not 'x'"]
