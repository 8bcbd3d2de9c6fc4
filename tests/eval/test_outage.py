"""A model server that goes down mid-run: the run stops with one line and exit 1; once the
server is back, the same command resumes, retries the error sessions and ends exactly as
an uninterrupted run (a loopback OpenAI-compatible server; nothing leaves the machine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loopback_openai import LoopbackServer

from rapport.cli import main
from rapport.store import RunStore

pytestmark = [pytest.mark.race, pytest.mark.usefixtures("registered")]


def _argv(run_dir: Path, *more: str) -> list[str]:
    return [
        "run",
        "scripted",
        "--memory",
        "none,notes",
        "--users",
        "3",
        "--sessions",
        "4",
        "--max-turns",
        "2",
        "--model",
        "all=openai/loop",
        "--run-dir",
        str(run_dir),
        "--no-progress",
        *more,
    ]


def _sessions(run_dir: Path) -> list[tuple[str, str, int, str, dict[str, float]]]:
    with RunStore(run_dir, create=False) as store:
        return [(r.condition, r.user_id, r.index, r.status, r.scores) for r in store.sessions()]


def test_a_server_stopped_mid_run_and_restarted_ends_like_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = LoopbackServer().start(stop_after=12)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    try:
        flaky = tmp_path / "flaky"
        assert main(_argv(flaky, "--max-failures", "3")) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "3 sessions in a row failed on a model provider" in err[0]
        cut = _sessions(flaky)
        assert any(s[3] == "error" for s in cut) and len(cut) < 24

        server.start()  # back up, same port
        assert main(_argv(flaky)) == 0
        resumed = _sessions(flaky)
        assert len(resumed) == 24 and all(s[3] == "ok" for s in resumed)

        monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "other-home"))  # no shared cache
        assert main(_argv(tmp_path / "clean")) == 0
        assert resumed == _sessions(tmp_path / "clean")
    finally:
        server.stop()


def test_sessions_answered_from_the_cache_do_not_hide_an_outage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = LoopbackServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    try:
        warm = [a for a in _argv(tmp_path / "warm") if a != "none,notes"]
        warm.insert(warm.index("--memory") + 1, "none")
        assert main(warm) == 0  # the cache now answers every session of `none`
        server.stop()
        server.start(stop_after=2)  # then the server dies early in the next run
        capsys.readouterr()
        # Each user's `none` sessions come from the cache between the failing `notes` ones:
        # only sessions that reached the server count, so 5 failures in a row stop it.
        assert main(_argv(tmp_path / "cold", "--max-failures", "5")) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "5 sessions in a row failed on a model provider" in err[0]
    finally:
        server.stop()


def test_a_run_that_ends_with_error_sessions_exits_1_and_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = LoopbackServer().start(stop_after=6)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    try:
        assert main(_argv(tmp_path / "run", "--max-failures", "0")) == 1
        err = capsys.readouterr().err.strip().splitlines()
        errors = [s for s in _sessions(tmp_path / "run") if s[3] == "error"]
        assert len(_sessions(tmp_path / "run")) == 24 and errors
        assert err[-1] == (
            f"rapport: the run ended with {len(errors)} error sessions; "
            "run the same command again to retry them"
        )
        server.start()
        assert main(_argv(tmp_path / "run")) == 0
        assert all(s[3] == "ok" for s in _sessions(tmp_path / "run"))
    finally:
        server.stop()
