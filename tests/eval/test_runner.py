"""The runner on the scripted benchmark: pairing, commits, resume, errors, the cache."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from runner_fakes import aware_reply

from rapport.eval import (
    Experiment,
    ExperimentConfig,
    ExperimentError,
    prepare_experiment,
    run_experiment,
)
from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent
from rapport.store import RunStore, SqliteCache

pytestmark = pytest.mark.usefixtures("registered")


def _config(run_dir: Path, **fields: object) -> ExperimentConfig:
    base = {
        "benchmark": "scripted",
        "memory": ["none", "notes"],
        "users": 3,
        "sessions": 4,
        "max_turns": 2,
        "run_dir": run_dir,
        "models": {"all": "fake/aware"},
    }
    return ExperimentConfig.model_validate({**base, **fields})


def _aware(cache: SqliteCache | None = None) -> ModelRoles:
    return ModelRoles({"all": ScriptedAPI(responder=aware_reply)}, cache=cache)


class PowerCut(BaseException):
    """Stands for the process dying: nothing in a session may catch it."""


def _crash_on_call(n: int) -> ModelRoles:
    """A model that works for n agent calls and then the power goes."""
    seen = {"agent": 0}

    def reply(request: Request) -> str:
        if request.messages[0].role == "system":
            seen["agent"] += 1
            if seen["agent"] > n:
                raise PowerCut("power cut")
        return aware_reply(request)

    return ModelRoles({"all": ScriptedAPI(responder=reply)})


def _table(run_dir: Path) -> list[tuple[str, str, int, str, dict[str, float]]]:
    store = RunStore(run_dir, create=False)
    return [(r.condition, r.user_id, r.index, r.spec_id, r.scores) for r in store.sessions()]


async def test_conditions_share_users_and_sessions_and_memory_reaches_the_agent(
    tmp_path: Path,
) -> None:
    result = await run_experiment(_config(tmp_path), progress=False)
    assert result.sessions_run == 24 and result.errors == 0
    rows = _table(tmp_path)
    pairs = {c: [(u, i, s) for cc, u, i, s, _ in rows if cc == c] for c in ("none", "notes")}
    assert pairs["none"] == pairs["notes"] and len(pairs["none"]) == 12
    hits = {(c, i): sc["hit"] for c, _u, i, _s, sc in rows}
    assert hits[("none", 3)] == 0.0  # no memory: the agent never learns the word
    assert hits[("notes", 0)] == 0.0 and hits[("notes", 3)] == 1.0  # notes: from session 1 on


async def test_a_crash_between_sessions_keeps_exactly_the_finished_ones(tmp_path: Path) -> None:
    config = _config(tmp_path, memory=["notes"], users=1)
    with pytest.raises(PowerCut, match="power cut"):
        await run_experiment(config, models=_crash_on_call(5), progress=False)
    store = RunStore(tmp_path, create=False)
    assert store.done("notes", "u0") == {0, 1}  # two agent calls per session: 4 made it
    latest = store.latest_memory("notes", "u0")
    assert latest is not None and latest.version == 2 and len(latest.state.items) == 2


async def test_a_run_stopped_part_way_holds_every_condition_of_the_users_it_reached(
    tmp_path: Path,
) -> None:
    # Two agent calls per session, four sessions per user: u0's eight sessions under both
    # conditions take 16 calls, and the 17th (u1's first) never returns.
    with pytest.raises(PowerCut):
        await run_experiment(_config(tmp_path), models=_crash_on_call(16), progress=False)
    store = RunStore(tmp_path, create=False)
    assert store.done("none", "u0") == store.done("notes", "u0") == {0, 1, 2, 3}
    assert store.done("none", "u1") == store.done("notes", "u1") == set()


async def test_resume_skips_done_sessions_restores_memory_and_matches_a_clean_run(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path / "resumed")
    with pytest.raises(PowerCut):
        await run_experiment(config, models=_crash_on_call(17), progress=False)
    resumed = await run_experiment(config, models=_aware(), progress=False)
    await run_experiment(_config(tmp_path / "clean"), models=_aware(), progress=False)
    assert resumed.sessions_skipped > 0
    assert resumed.sessions_run + resumed.sessions_skipped == 24
    assert _table(tmp_path / "resumed") == _table(tmp_path / "clean")
    store = RunStore(tmp_path / "resumed", create=False)
    final = store.latest_memory("notes", "u2")
    assert final is not None and [i.id for i in final.state.items] == ["n0", "n1", "n2", "n3"]


async def test_rerunning_a_finished_run_makes_no_model_calls(tmp_path: Path) -> None:
    cache = SqliteCache(tmp_path / "cache.sqlite")
    first = await run_experiment(_config(tmp_path / "a"), models=_aware(cache), progress=False)
    again = await run_experiment(_config(tmp_path / "a"), models=_aware(cache), progress=False)
    fresh_dir = await run_experiment(_config(tmp_path / "b"), models=_aware(cache), progress=False)
    assert first.model_calls > 0
    assert (again.sessions_run, again.model_calls, again.cached_calls) == (0, 0, 0)
    assert fresh_dir.sessions_run == 24 and fresh_dir.model_calls == 0
    assert _table(tmp_path / "a") == _table(tmp_path / "b")


async def test_model_errors_are_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    result = await run_experiment(
        _config(tmp_path, models={"all": "fake/broken"}, memory=["none"]),
        progress=False,
        max_failures=0,
    )
    assert result.sessions_run == 12 and result.errors == 12
    assert result.failed_calls == 12 and result.cached_calls == 0
    records = RunStore(tmp_path, create=False).sessions()
    assert all(r.status == "error" for r in records)
    event = records[0].events_of(ErrorEvent)[0]
    assert event.where == "user" and "server is down" in event.message
    assert event.error_type == "ModelError"
    assert records[0].usage and records[0].usage[0].error is not None


async def test_a_failing_learn_marks_the_session_and_the_run_goes_on(tmp_path: Path) -> None:
    result = await run_experiment(_config(tmp_path, memory=["forgetful"], users=1), progress=False)
    records = RunStore(tmp_path, create=False).sessions()
    assert result.sessions_run == 4
    assert [r.status for r in records] == ["error"] * 4
    assert all(r.events_of(ErrorEvent)[0].where == "memory.learn" for r in records)
    assert all(r.events_of(ErrorEvent)[0].error_type == "RuntimeError" for r in records)
    assert all("hit" in r.scores for r in records)  # what the session measured is kept


@pytest.mark.race
async def test_concurrency_changes_nothing_but_speed(tmp_path: Path) -> None:
    await run_experiment(_config(tmp_path / "one"), progress=False)
    await run_experiment(_config(tmp_path / "many", concurrency=4), progress=False)
    assert _table(tmp_path / "one") == _table(tmp_path / "many")


async def test_the_heap_is_frozen_while_sessions_run_and_left_as_found(tmp_path: Path) -> None:
    frozen: list[int] = []

    def reply(request: Request) -> str:
        frozen.append(gc.get_freeze_count())
        return aware_reply(request)

    models = ModelRoles({"all": ScriptedAPI(responder=reply)})
    config = _config(tmp_path / "a", memory=["none"], users=1, sessions=1)
    await run_experiment(config, models=models, progress=False)
    assert frozen and min(frozen) > 0 and gc.get_freeze_count() == 0
    with pytest.raises(PowerCut):
        await run_experiment(_config(tmp_path / "b"), models=_crash_on_call(3), progress=False)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # the caller's own freeze stays
    try:
        await run_experiment(_config(tmp_path / "c", users=1, sessions=1), progress=False)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


async def test_a_different_config_on_an_existing_run_dir_is_refused(tmp_path: Path) -> None:
    await run_experiment(_config(tmp_path, users=1), progress=False)
    with pytest.raises(ExperimentError, match="users: 1 -> 2"):
        await run_experiment(_config(tmp_path, users=2), progress=False)
    again = await run_experiment(_config(tmp_path, users=1, concurrency=3), progress=False)
    assert again.sessions_skipped == 8


async def test_train_sessions_build_memory_but_are_marked_train(tmp_path: Path) -> None:
    await run_experiment(
        _config(tmp_path, options={"train_sessions": "2"}, users=1), progress=False
    )
    records = RunStore(tmp_path, create=False).sessions(condition="notes")
    assert [r.split for r in records] == ["train", "train", "eval", "eval"]
    assert records[2].scores["hit"] == 1.0


def test_bad_names_fail_before_anything_is_written(tmp_path: Path) -> None:
    from rapport.eval import prepare_experiment

    for fields in (
        {"benchmark": "nope"},
        {"memory": ["zzz"]},
        {"models": {"all": "fake/what"}},
        {"options": {"delay": "-1"}},
    ):
        with pytest.raises(ExperimentError):
            prepare_experiment(_config(tmp_path / "run", **fields))
    assert not (tmp_path / "run").exists()
    assert issubclass(ExperimentError, ValueError) and not issubclass(ModelError, ExperimentError)


def _phased(config: ExperimentConfig, models: ModelRoles | None = None) -> Experiment:
    """The experiment with each user's sessions in two phases: 0-1, then 2-3."""
    experiment = prepare_experiment(config, models=models)
    experiment.sessions = {
        user: [s.model_copy(update={"phase": s.index // 2}) for s in specs]
        for user, specs in experiment.sessions.items()
    }
    return experiment


async def test_every_users_sessions_of_a_phase_run_before_the_next_phase(tmp_path: Path) -> None:
    await _phased(_config(tmp_path / "phased", concurrency=2), _aware()).run(progress=False)
    records = sorted(
        RunStore(tmp_path / "phased", create=False).sessions(), key=lambda r: r.finished_at
    )
    phases = [r.index // 2 for r in records]
    assert phases == sorted(phases) and len(records) == 24
    await run_experiment(_config(tmp_path / "straight"), models=_aware(), progress=False)
    assert _table(tmp_path / "phased") == _table(tmp_path / "straight"), "a user's order stays"


async def test_a_phased_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    config = _config(tmp_path / "resumed")
    with pytest.raises(PowerCut):
        await _phased(config, _crash_on_call(30)).run(progress=False)
    done = RunStore(tmp_path / "resumed", create=False).sessions()
    assert {r.index // 2 for r in done} == {0, 1} and len(done) < 24
    result = await _phased(config, _aware()).run(progress=False)
    assert result.sessions_run + result.sessions_skipped == 24
    await _phased(_config(tmp_path / "clean"), _aware()).run(progress=False)
    assert _table(tmp_path / "resumed") == _table(tmp_path / "clean")


async def test_a_memory_placed_at_the_turn_reaches_the_agent_after_the_conversation(
    tmp_path: Path,
) -> None:
    prompts: list[list[tuple[str, str]]] = []

    def reply(request: Request) -> str:
        if request.messages[0].role == "system":
            prompts.append([(m.role, m.content) for m in request.messages])
        return aware_reply(request)

    config = _config(
        tmp_path, memory=["notes"], users=1, memory_options={"notes": {"notes_in": "turn"}}
    )
    models = ModelRoles({"all": ScriptedAPI(responder=reply)})
    await run_experiment(config, progress=False, models=models)
    told = [p for p in prompts if any("likes" in text for _, text in p)]
    assert told, "the notes never reached the agent"
    for prompt in told:
        assert "likes" not in prompt[0][1]  # not in the system prompt
        assert prompt[-1][0] == "system" and prompt[-1][1].startswith("## What you know")
        assert prompt[-2][0] == "user"  # right after the latest message
    with RunStore.open_readonly(tmp_path) as store:
        settings = store.invocations()[-1].memory_settings
    assert settings["notes"]["notes_in"] == "turn"
