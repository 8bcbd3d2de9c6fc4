"""`rapport serve-memory`: tenants and keys from the command line, the builder's demo, and
bad input as one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.store import ServiceStore, key_digest


def test_add_tenant_prints_a_key_that_only_its_digest_is_stored_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.sqlite"
    assert main(["serve-memory", "--db", str(db), "--add-tenant", "acme"]) == 0
    key = capsys.readouterr().out.strip()
    store = ServiceStore(db)
    assert store.tenant_of(key) == "acme"
    assert key.encode() not in db.read_bytes() + Path(f"{db}-wal").read_bytes()
    assert key_digest(key).encode() in db.read_bytes() + Path(f"{db}-wal").read_bytes()
    assert db.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--memory", "nope"], "unknown memory 'nope'"),
        (["--memory", "rag", "--memory-option", "k"], "--memory-option takes KEY=VALUE"),
        (["--memory", "rag", "--memory-option", "k=0"], "--memory-option k"),
        (["--memory", "rag", "--memory-option", "colour=red"], "--memory-option colour"),
        (["--add-tenant", "a b"], "is not a name"),
        (["--port", "70000"], "--port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    try:
        code = main(["serve-memory", "--db", str(tmp_path / "m.sqlite"), *flags])
    except SystemExit as stop:  # argparse's own refusals
        code = int(stop.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


def test_the_demo_plays_two_conversations_through_the_proxy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.sqlite"
    assert main(["serve-memory", "--db", str(db), "--demo", "scripted/auto"]) == 0
    out = capsys.readouterr().out
    assert "[conversation 1] user: From now on, please answer me in short bullet points" in out
    assert "[conversation 2] assistant:" in out
    assert ServiceStore(db).memory("demo", "ada").version == 1
