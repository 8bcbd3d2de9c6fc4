"""MultiSessionCollab's user profiles and cached problem files load through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.log import ContextEvent, RecallEvent
from rapport.store import RunStore

DATA = Path(__file__).parents[1] / "envs" / "collab" / "data" / "msc_layout"
"""Our profiles and problems in the layout of MultiSessionCollab's published files (see its
README.md)."""


@pytest.mark.parametrize("user", ["llm", "rules"])
def test_msc_profiles_and_cached_problems_run_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], user: str
) -> None:
    argv = [
        "run",
        "collab",
        "--profiles",
        str(DATA / "user_profiles.json"),
        "--problems",
        str(DATA / "cache" / "mmlu" / "testset_size20_seed42.json"),
        "--user",
        user,
        "--users",
        "1" if user == "rules" else "2",
        "--sessions",
        "2",
        "--max-turns",
        "2",
        "--memory",
        "none",
        "--model",
        "all=scripted/auto",
        "--run-dir",
        str(tmp_path / "r"),
        "--no-progress",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    sessions = RunStore(tmp_path / "r", create=False).sessions()
    users = {s.user_id for s in sessions}
    assert users == ({"msc-000"} if user == "rules" else {"msc-000", "msc-001"})
    assert {s.outcome.problem.source for s in sessions} == {"mmlu/testset_size20_seed42"}
    assert all(s.outcome.problem.kind == "choice" for s in sessions)


def test_too_few_usable_profiles_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "collab", "--profiles", str(DATA / "user_profiles.json")]
    argv += ["--user", "rules", "--users", "3", "--model", "all=scripted/auto"]
    argv += ["--run-dir", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "profiles" in err[0]
    assert not (tmp_path / "r").exists()


def test_user_is_a_benchmark_option_not_an_abbreviation_of_users() -> None:
    from rapport.cli import build_parser
    from rapport.cli._config import config_from_args

    args = build_parser().parse_args(["run", "collab", "--user", "rules", "--users", "3"])
    config = config_from_args(args)
    assert config.users == 3 and config.options["user"] == "rules"


CHECKOUT = Path(__file__).parents[1] / "envs" / "collab" / "data" / "msc_checkout"
"""Our own prompt text in the layout of a MultiSessionCollab checkout."""


def _run(tmp_path: Path, *extra: str) -> list[str]:
    argv = ["run", "collab", "--users", "1", "--sessions", "1", "--max-turns", "2"]
    argv += ["--memory", "none", "--model", "all=scripted/auto", "--no-progress"]
    return [*argv, "--run-dir", str(tmp_path / "r"), *extra]


def test_prompts_from_a_checkout_run_and_the_report_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path, "--prompts-from", str(CHECKOUT))) == 0, capsys.readouterr().err
    (session,) = RunStore(tmp_path / "r", create=False).sessions()
    assert session.outcome.prompts.startswith("MultiSessionCollab collaborativeagents/prompts.py")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "Prompts read from a MultiSessionCollab checkout" in out
    assert "user_system_prompt_profile_with_preferences" in out


@pytest.mark.parametrize("where", ["absent", "empty"])
def test_prompts_from_no_checkout_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    checkout = tmp_path / where
    if where == "empty":
        checkout.mkdir()
    assert main(_run(tmp_path, "--prompts-from", str(checkout))) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(checkout) in err[0], err
    assert not (tmp_path / "r").exists()


def test_prompts_from_gives_reflection_msc_s_notes_prompts_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _run(tmp_path, "--prompts-from", str(CHECKOUT), "--sessions", "2")
    argv[argv.index("none")] = "reflection"
    assert main(argv) == 0, capsys.readouterr().err
    store = RunStore(tmp_path / "r", create=False)
    options = store.run().config.memory_options["reflection"]
    assert options == {"form": "msc", "prompts_from": str(CHECKOUT)}
    first, second = store.sessions()
    assert not first.events_of(ContextEvent)
    assert "reflective_agent_system_prompt_no_json" not in first.outcome.prompts
    [context] = second.events_of(ContextEvent)
    learned = {v.version: v.state for v in store.memory_versions("reflection", first.user_id)}
    [notes] = learned[1].items
    assert context.text == notes.text  # the notes alone: MSC's agent prompt places them
    assert second.outcome.prompts.endswith(
        ": reflective_agent_system_prompt_no_json, "
        "user_system_prompt_profile_with_preferences, accuracy_prompt_qa"
    )
    recalls = second.events_of(RecallEvent)
    assert recalls and all(r.text.startswith("Notes {picked} for this reply:\n") for r in recalls)
