"""The README quick tour's MPT run, on ``scripted/auto`` (schema-valid answers at no model
cost), plays every session without an error."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.log import ErrorEvent
from rapport.store import RunStore

README = Path(__file__).resolve().parents[3] / "README.md"


def _quick_tour_mpt() -> list[str]:
    line = next(x for x in README.read_text().splitlines() if x.startswith("rapport run mpt "))
    return shlex.split(line, comments=True)[1:]


def test_the_quick_tour_mpt_run_on_scripted_auto_has_no_error_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _quick_tour_mpt()
    assert argv[argv.index("--users") + 1] == "6"
    argv[argv.index("--users") + 1] = "1"  # one user plays every kind of session
    argv[argv.index("--run-dir") + 1] = str(tmp_path / "mpt")
    assert main([*argv, "--model", "all=scripted/auto", "--no-progress"]) == 0
    with RunStore.open_readonly(tmp_path / "mpt") as store:
        records = store.sessions()
    assert len({r.condition for r in records}) == 5 and len(records) > 50
    errors = [(r.condition, e.message) for r in records for e in r.events_of(ErrorEvent)]
    assert [r for r in records if r.status == "error"] == [] and errors == []
    assert ", 0 with errors," in capsys.readouterr().err
