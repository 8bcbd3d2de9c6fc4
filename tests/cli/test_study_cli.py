"""``rapport study create|status``: what they print, and bad input as one line, exit 2,
nothing written."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from rapport.cli import main

DESIGN = Path(__file__).parents[2] / "docs" / "study-design.yaml"


def test_create_prints_one_invite_per_participant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    args = ["--participants", "3", "--out", str(out), "--model", "all=scripted/auto"]
    assert main(["study", "create", str(DESIGN), *args]) == 0
    printed = capsys.readouterr().out
    invites = [line.split()[1] for line in printed.splitlines() if line.startswith("  p0")]
    assert len(invites) == 3 and len(set(invites)) == 3
    assert all(path.startswith("/p/") and len(path) >= 3 + 32 for path in invites)
    assert "researcher page: /r/" in printed
    assert stat.S_IMODE(os.stat(out / "invites.csv").st_mode) == 0o600
    assert main(["study", "status", str(out)]) == 0
    status = capsys.readouterr().out
    assert "participants: 3, consented: 0" in status
    lines = status.splitlines()[1:]
    assert lines[0].split() == [
        "participant", "study", "types", "condition", "order", "consented", "sessions", "closing"
    ]  # fmt: skip
    assert [line.split()[-2:] for line in lines[1:]] == [["0/12", "-"]] * 3
    # every column starts at the same place on every line
    for column in ("condition order", "consented", "sessions", "closing"):
        at = lines[0].index(column)
        assert all(line[at - 2 : at] == "  " and line[at] != " " for line in lines[1:])
    assert main(["study", "status", str(out), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["participant"] for p in listed["participants"]] == ["p01", "p02", "p03"]
    assert listed["participants"][2]["order"] == "reflection then none"


def test_a_bad_count_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    with pytest.raises(SystemExit) as exited:
        main(["study", "create", str(DESIGN), "--participants", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "--participants" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_bad_model_flag_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    args = ["study", "create", str(DESIGN), "--participants", "2", "--out", str(out)]
    assert main([*args, "--model", "agent="]) == 2
    err = capsys.readouterr().err
    assert "--model needs ROLE=SPEC" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_bad_design_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(
        DESIGN.read_text().replace(
            "conditions: [none, reflection]", "conditions: [none, nostalgia]"
        )
    )
    out = tmp_path / "study"
    assert main(["study", "create", str(design), "--participants", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown memory 'nostalgia'" in err and err.count("\n") == 1
    assert not out.exists()


def test_an_existing_dir_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["study", "create", str(DESIGN), "--participants", "2", "--out", str(out)]) == 2
    assert "is not an empty directory" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_status_and_serve_refuse_a_dir_without_a_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", "status", str(tmp_path)]) == 2
    assert main(["study", "serve", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("no study found") == 2


def test_create_fails_on_missing_weights_not_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    args = ["study", "create", str(DESIGN), "--participants", "2", "--out", str(out)]
    missing = tmp_path / "nowhere.gguf"
    assert main([*args, "--model", f"all=llamacpp/{missing}"]) == 2
    err = capsys.readouterr().err
    assert f"cannot create {out}" in err and "does not exist" in err and err.count("\n") == 1
    assert not out.exists()


def test_serve_points_a_model_error_at_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    model = tmp_path / "weights.gguf"
    model.write_bytes(b"GGUF")
    args = ["study", "create", str(DESIGN), "--participants", "1", "--out", str(out)]
    assert main([*args, "--model", f"all=llamacpp/{model}"]) == 0
    model.unlink()  # the weights went away after the study was made
    capsys.readouterr()
    assert main(["study", "serve", str(out), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "rapport study create ... --model ROLE=SPEC" in err and err.count("\n") == 1


def test_serve_refuses_to_start_without_the_study_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "study"
    args = ["--participants", "1", "--out", str(out), "--model", "all=scripted/auto"]
    assert main(["study", "create", str(DESIGN), *args]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "nh3", None)  # as if not installed
    assert main(["study", "serve", str(out), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "rapport: the study app needs nh3: pip install 'rapport-toolkit[study]'\n"
