"""What a new user hits first: a misspelt flag or key, a flag without its value, the help
text. Each answer is one line on stderr naming the fix, with exit code 2."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rapport.cli import build_parser, main
from rapport.cli._config import config_from_args


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


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    argv = ["run", "scripted", "--users", "1", "--sessions", "2", "--run-dir", str(run_dir)]
    assert main([*argv, "--model", "all=scripted/auto", "--no-progress"]) == 0
    (run_dir / "report.html").unlink()
    return run_dir


def test_a_report_that_cannot_be_written_prints_only_its_error(
    small_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["report", str(small_run), "--html", "/proc/rapport-report.html"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1
    assert "/proc/rapport-report.html" in out.err


@pytest.mark.parametrize(
    "argv", [["report"], ["export", "--format", "jsonl"], ["view", "--port", "0"]]
)
def test_reading_a_store_leaves_nothing_beside_it_damaged_or_not(
    small_run: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    command = [argv[0], str(small_run), *argv[1:]]

    def beside() -> set[str]:
        return {p.name for p in small_run.iterdir()} - {"report.html", "sessions.jsonl"}

    assert beside() == {"run.sqlite"}
    if argv[0] != "view":  # the viewer serves until it is stopped
        assert main(command) == 0
        assert beside() == {"run.sqlite"}
    conn = sqlite3.connect(small_run / "run.sqlite")
    conn.execute("UPDATE sessions SET body = '{' WHERE rowid = 1")
    conn.commit()
    conn.close()
    assert beside() == {"run.sqlite"}
    capsys.readouterr()
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    if argv[0] == "view":  # after its "reading RUN_DIR ..." line
        err = err[1:]
    assert len(err) == 1 and err[0].startswith("rapport: ") and "run.sqlite" in err[0]
    assert beside() == {"run.sqlite"}


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (
            ["export", "{run}", "--sessions", "parquet"],
            "--sessions is now --format: --format parquet",
        ),
        (
            ["run", "scripted", "--model", "scripted/echo"],
            "--model all=scripted/echo sets every role",
        ),
        (["demo", "--model", "scripted/echo"], "--model all=scripted/echo sets every role"),
        (
            ["run", "scripted", "--model", "agent=llamacpp/qwen2.5-coder-0.5b?n_ctx=16384"],
            "--model agent=llamacpp/qwen2.5-coder-0.5b,n_ctx=16384",
        ),
        (["serve-model", "--model", "llamacpp/m?n_ctx=4096"], "--model llamacpp/m --n-ctx N"),
    ],
)
def test_an_old_flag_form_is_refused_with_the_new_one(
    tmp_path: Path, argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    argv = [a.format(run=run_dir) for a in argv]
    if argv[0] in ("run", "demo"):
        argv += ["--run-dir", str(run_dir)]
    err = _refused(argv, capsys)
    assert hint in err
    assert not run_dir.exists()


def test_model_options_after_commas_reach_the_role_settings() -> None:
    argv = ["run", "collab", "--model", "all=llamacpp/qwen2.5-coder-0.5b,n_ctx=16384"]
    config = config_from_args(build_parser().parse_args(argv))
    assert config.models == {"all": "llamacpp/qwen2.5-coder-0.5b"}
    assert config.model_settings["all"].n_ctx == 16384
