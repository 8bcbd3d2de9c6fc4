"""A run started without ``--run-dir`` gets a dir of its own under ``runs/`` (benchmark, start
time, short id) and ``runs/latest`` points at it: runs of different benchmarks, or two of one,
never collide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.cli._rundirs import new_run_dir, point_latest

SMALL = ["--users", "1", "--sessions", "1", "--max-turns", "1", "--model", "all=scripted/auto"]
_NAME = re.compile(r"(?P<bench>[a-z-]+)-\d{8}-\d{6}-[0-9a-f]{6}")


def _run(benchmark: str, *extra: str) -> int:
    return main(["run", benchmark, "--memory", "none", *SMALL, *extra, "--no-progress"])


def test_runs_of_two_benchmarks_get_their_own_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run("scripted") == 0
    first = capsys.readouterr().err
    assert _run("collab", "--user", "rules") == 0
    second = capsys.readouterr().err
    dirs = sorted(p for p in (tmp_path / "runs").iterdir() if not p.is_symlink())
    kinds = [m.group("bench") for p in dirs if (m := _NAME.fullmatch(p.name))]
    assert sorted(kinds) == ["collab", "scripted"]
    collab = next(p for p in dirs if p.name.startswith("collab-"))
    assert f"run dir: runs/{collab.name}" in second and "run dir: runs/scripted-" in first
    latest = tmp_path / "runs" / "latest"
    assert latest.is_symlink() and latest.resolve() == collab.resolve()
    assert main(["report", "runs/latest"]) == 0
    assert main(["compare", "runs"]) == 0  # the link is not a third run
    assert capsys.readouterr().out.count("\n== ") == 2


def test_two_runs_of_one_benchmark_in_one_second_differ(tmp_path: Path) -> None:
    names = {new_run_dir("collab", root=tmp_path, now=0.0) for _ in range(50)}
    assert len(names) == 50


def test_a_named_run_dir_is_used_and_latest_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run("scripted", "--run-dir", "runs/mine") == 0
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["mine"]


def test_a_real_latest_dir_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "latest").mkdir(parents=True)
    (tmp_path / "runs" / "latest" / "keep").write_text("x")
    assert point_latest(Path("runs") / "scripted-x") is None
    assert (tmp_path / "runs" / "latest" / "keep").read_text() == "x"
