"""What ``--help``, ``rapport list`` and a misspelt model say: percent signs as printed,
descriptions whole on request, each benchmark's own help, every study option described, and
the nearest scripted model suggested."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

import pytest

from rapport.cli import build_parser, main
from rapport.envs import BENCHMARKS, benchmark_class


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["compare", "demo"])
def test_help_prints_one_percent_sign(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(_help([command, "--help"], capsys).split())
    assert "95%" in text and "%%" not in text


def test_collab_ablation_help_is_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["run", "collab-ablation", "--help"], capsys)
    assert "collab-ablation: The same users and problems under five settings" in text
    assert "multiturn_no_prefs" in text
    collab = _help(["run", "collab", "--help"], capsys)
    assert "multiturn_no_prefs" not in collab and "\ncollab: " in collab


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_study_option_and_subcommand_is_described() -> None:
    study = _subparsers(build_parser())["study"]
    for name, sub in _subparsers(study).items():
        assert sub.description, name
        for action in sub._actions:
            assert action.help, f"study {name} {action.dest}"


def _long_description() -> tuple[str, str]:
    """A benchmark whose first docstring paragraph is longer than the short listing shows."""
    for name in BENCHMARKS:
        doc = inspect.getdoc(benchmark_class(name)) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        if len(first.split(". ")[0]) > 100 and "`" not in first:
            return name, first
    pytest.skip("no benchmark with a long description")
    raise AssertionError  # pytest.skip raises


def test_list_long_shows_descriptions_whole(capsys: pytest.CaptureFixture[str]) -> None:
    name, first = _long_description()
    assert main(["list", "benchmarks"]) == 0
    short = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(name))
    assert short.endswith("…")
    assert main(["list", "benchmarks", "--long"]) == 0
    out = capsys.readouterr().out
    text = out[out.index(f"\n{name}\n") :] if f"\n{name}\n" in out else out[out.index(name) :]
    assert " ".join(first.split()) in " ".join(text.split())


def test_a_misspelt_scripted_model_names_the_nearest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "scripted", "--model", "all=scripted/autoo", "--run-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean scripted/auto?" in err[0], err
    assert not (tmp_path / "r").exists()
