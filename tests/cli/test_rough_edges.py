"""What a new user hits first: a misspelt flag or key, a flag without its value, the help
text. Each answer is one line on stderr naming the fix, with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    return err


def test_a_misspelt_run_flag_names_the_flag_it_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    err = _refused(["run", "mpt", "--max-turn", "3", "--run-dir", str(run_dir)], capsys)
    assert err == "rapport: unknown option --max-turn; did you mean --max-turns?"
    err = _refused(["run", "collab", "--problem", "generated", "--run-dir", str(run_dir)], capsys)
    assert err == "rapport: unknown option --problem; did you mean --problems?"
    assert not run_dir.exists()


def test_a_misspelt_key_in_a_config_file_names_the_file_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text("users: 2\nmax_turn: 3\n")
    err = _refused(["run", "collab", "--config", str(config)], capsys)
    assert (
        err == f"rapport: config file {config}: unknown key 'max_turn'; did you mean 'max_turns'?"
    )
    config.write_text("options: {problem: generated}\n")
    err = _refused(["run", "collab", "--config", str(config)], capsys)
    assert "unknown option 'problem' under options; did you mean 'problems'?" in err
    for jargon in ("Extra inputs", "validation error", "pydantic", "extra_forbidden"):
        assert jargon not in err


def test_an_unknown_flag_of_any_command_is_one_plain_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(["view", str(tmp_path), "--prot", "9000"], capsys)
    assert err == "rapport: view: unknown option --prot; did you mean --port?"
    err = _refused(["report", str(tmp_path), "--formt=json"], capsys)
    assert err == "rapport: report: unknown option --formt; did you mean --format?"
    err = _refused(["view", str(tmp_path), "stray"], capsys)
    assert err == "rapport: view: unexpected argument 'stray'"


def test_an_option_flag_without_its_value_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(["run", "collab", "--problems", "--run-dir", str(tmp_path / "r")], capsys)
    assert err == "rapport: --problems needs a value"


def test_report_help_reads_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "95% bootstrap CI" in text and "%%" not in text
    assert "writes report.html" in text and "The run is only read" not in text
