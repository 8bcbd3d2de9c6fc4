"""``rapport compare``: runs side by side as text, JSON, CSV and HTML; bad input is one line
and exit 2, with nothing written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.eval import run
from rapport.log import ExperimentConfig


def _run(run_dir: Path, benchmark: str = "scripted", **fields: object) -> Path:
    settings: dict[str, object] = {"memory": ["none", "oracle"], "users": 2, "sessions": 2}
    settings |= {"max_turns": 2, "models": {"all": "scripted/auto"}, "cache": False}
    config = ExperimentConfig.model_validate(
        {"benchmark": benchmark, "run_dir": run_dir, **settings, **fields}
    )
    run(config, progress=False)
    return run_dir


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    _run(root / "a", seed=1)
    _run(root / "b", seed=1, models={"all": "scripted/auto", "agent": "scripted/echo"})
    _run(root / "c", seed=2)
    return root


def test_text_names_each_run_and_the_paired_difference(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *(str(folder / n) for n in "abc")]) == 0
    out = capsys.readouterr().out
    assert "agent=scripted/echo" in out
    assert "b - a  " in out and "c - a  " not in out
    assert "Not paired: c - a: different seeds (1 and 2) draw different problems." in out
    assert "Not paired: c - b: different seeds (1 and 2)" in out


def test_a_folder_stands_for_its_runs_and_html_is_written(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "compare.html"
    assert main(["compare", str(folder), "--format", "json", "--html", str(page)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in document["runs"]] == ["a", "b", "c"]
    assert "<table>" in page.read_text()


def test_csv_has_one_row_per_run_condition_and_metric(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(folder / "a"), str(folder / "c"), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["run"], r["condition"], r["metric"]) for r in rows} == {
        (run, c, m) for run in "ac" for c in ("none", "oracle") for m in ("hit", "words")
    }
    assert {r["users"] for r in rows} == {"2"}  # the users each mean is over


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two scripted runs and two collab runs in one folder, with a ``latest`` link."""
    root = tmp_path_factory.mktemp("mixed")
    _run(root / "a", seed=1)
    _run(root / "b", seed=1, models={"all": "scripted/auto", "agent": "scripted/echo"})
    _run(root / "collab-1", benchmark="collab", options={"user": "rules"})
    _run(root / "collab-2", benchmark="collab", options={"user": "rules"}, seed=3)
    (root / "latest").symlink_to("collab-2", target_is_directory=True)
    return root


def test_a_mixed_folder_gives_one_comparison_per_benchmark(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(mixed)]) == 0
    out = capsys.readouterr().out
    assert "== collab: 2 runs ==" in out and "== scripted: 2 runs ==" in out
    assert "b - a  " in out
    assert "Not paired: collab-2 - collab-1: different seeds (0 and 3)" in out
    assert main(["compare", str(mixed), "--format", "json"]) == 0
    documents = json.loads(capsys.readouterr().out)
    assert [(d["benchmark"], len(d["runs"])) for d in documents] == [
        ("scripted", 2),
        ("collab", 2),
    ]
    assert main(["compare", str(mixed), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["benchmark"] for r in rows} == {"collab", "scripted"}
    assert all(r["users"] for r in rows)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["{tmp}/empty"], "no run found"),
        (["{runs}/a", "{tmp}/missing"], "no run found"),
        (["{runs}/a", "{runs}/a"], "given twice"),
        (["{runs}/a", "--html", "{runs}/a/run.sqlite"], "would overwrite a run store"),
        (["{runs}/a", "--html", "{tmp}/empty"], "is a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str],
    needle: str,
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "empty").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(["compare", *(a.format(tmp=tmp_path, runs=folder) for a in argv)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and needle in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
