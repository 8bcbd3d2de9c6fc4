"""One process per run dir; credentials in base URLs are never written anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from loopback_openai import LoopbackServer

from rapport.cli import main
from rapport.llm import redact_secrets
from rapport.store import RunDirLock, RunStore

pytestmark = pytest.mark.usefixtures("registered")

ARGV = ["run", "scripted", "--users", "1", "--sessions", "2", "--max-turns", "1", "--no-progress"]


@pytest.mark.race
def test_a_second_process_on_a_running_run_dir_gets_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    argv = [*ARGV, "--model", "all=scripted/auto", "--run-dir", str(run_dir)]
    assert main(argv) == 0
    capsys.readouterr()
    before = (run_dir / "run.sqlite").read_bytes()
    lock = RunDirLock(run_dir)
    lock.acquire()  # as the process running it would
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rapport", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "in use by another rapport process" in lines[0]
        assert main(argv) == 2  # the same from this process
    finally:
        lock.release()
    assert (run_dir / "run.sqlite").read_bytes() == before
    assert main(argv) == 0  # free again: resumes


def test_redaction_takes_out_passwords_keys_and_tokens() -> None:
    assert redact_secrets("http://user:pw@host:8000/v1") == "http://***@host:8000/v1"
    assert (
        redact_secrets("at https://k@h/v1?api_key=abc&x=1") == "at https://***@h/v1?api_key=***&x=1"
    )
    assert redact_secrets("Authorization: Bearer sk-abcdefghijkl") == "Authorization: Bearer ***"
    assert redact_secrets("mail me at a@b.c") == "mail me at a@b.c"


@pytest.mark.race
def test_credentials_in_the_base_url_reach_no_file_and_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Up for the check before the run, refusing every call: the URL lands in every error.
    server = LoopbackServer().start(stop_after=0)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://alice:s3cret-pw@127.0.0.1:{server.port}/v1")
    run_dir = tmp_path / "run"
    argv = [*ARGV, "--model", "all=openai/loop", "--run-dir", str(run_dir), "--max-failures", "0"]
    try:
        assert main(argv) == 1  # ended with error sessions
    finally:
        server.stop()
    ran = capsys.readouterr()
    assert (
        main(["report", str(run_dir), "--format", "json", "--html", str(run_dir / "r.html")]) == 0
    )
    out = capsys.readouterr()
    assert "s3cret-pw" not in ran.out + ran.err + out.out + out.err
    report = json.loads(out.out.split("\nreport:")[0])
    assert report["error_sessions"] == 2 and "***@127.0.0.1" in json.dumps(report["error_list"])
    with RunStore(run_dir, create=False) as store:
        assert store.session_count() == 2
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert b"s3cret-pw" not in path.read_bytes(), path
