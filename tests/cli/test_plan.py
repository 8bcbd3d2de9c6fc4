"""``rapport run ... --plan``: what a run will do, estimated, checked against finished runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rapport.cli import main
from rapport.envs import BENCHMARKS, PaperSetting
from rapport.envs._paper import generic
from rapport.envs.scripted import ScriptedBenchmark
from rapport.llm import ModelRoles
from rapport.store import RunStore


class PaperBench(ScriptedBenchmark):
    """Scripted sessions whose paper fixes 20 sessions per user."""

    paper_protocol = (
        PaperSetting("sessions per user", 20, "§5.1", "--sessions", generic("sessions")),
    )


def _argv(run_dir: Path, *extra: str, memory: str = "none,oracle") -> list[str]:
    argv = ["run", "scripted", "--users", "2", "--sessions", "3", "--max-turns", "2"]
    argv += ["--memory", memory, "--model", "all=scripted/auto", "--no-progress"]
    return [*argv, "--run-dir", str(run_dir), *extra]


def _plan(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main([*argv, "--plan", "--format", "json"]) == 0, capsys.readouterr().err
    plan: dict[str, Any] = json.loads(capsys.readouterr().out)
    return plan


def _actual(run_dir: Path) -> dict[str, tuple[int, int, int]]:
    """Role -> calls, prompt and completion tokens the stored run made."""
    calls: Counter[str] = Counter()
    prompt: Counter[str] = Counter()
    completion: Counter[str] = Counter()
    with RunStore.open_readonly(run_dir) as store:
        for record in store.iter_sessions():
            for call in record.usage:
                calls[call.role] += 1
                prompt[call.role] += call.prompt_tokens
                completion[call.role] += call.completion_tokens
    return {r: (calls[r], prompt[r], completion[r]) for r in calls}


def test_the_plan_from_the_caps_matches_the_run_it_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "r"
    plan = _plan(capsys, _argv(run_dir))
    assert not run_dir.exists()  # a plan writes nothing
    assert plan["users"] == 2 and plan["sessions_per_user"] == {"3": 2}
    assert [c["name"] for c in plan["conditions"]] == ["none", "oracle"]
    assert plan["sessions"] == 12 and plan["datasets"] == {"scripted": 6}
    roles = {r["role"]: r for r in plan["roles"]}
    assert set(roles) == {"agent", "user"}
    assert all(r["model"] == "scripted/auto" and r["model_from"] == "all" for r in roles.values())
    assert plan["differs_from_paper"] is None

    assert main(_argv(run_dir)) == 0
    capsys.readouterr()
    actual = _actual(run_dir)
    # The scripted benchmark's sessions always run to their cap: the caps are exact.
    assert {r: roles[r]["calls"] for r in roles} == {r: actual[r][0] for r in actual}
    assert all(roles[r]["basis"] == "caps" for r in roles)


def test_like_a_finished_run_gives_its_measured_calls_and_tokens_per_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    like = tmp_path / "like"
    assert main(_argv(like, memory="none,reflection")) == 0
    capsys.readouterr()
    actual = _actual(like)
    assert actual["memory"][0] > 0  # reflection calls the memory role
    plan = _plan(capsys, _argv(tmp_path / "new", "--like", str(like), memory="none,reflection"))
    roles = {r["role"]: r for r in plan["roles"]}
    assert set(roles) == {"agent", "user", "memory"}
    for role, (calls, prompt, completion) in actual.items():
        got = roles[role]
        assert (got["calls"], got["prompt_tokens"], got["completion_tokens"]) == (
            calls,
            prompt,
            completion,
        ), role
        assert got["basis"] == "measured"

    # Twice the users: twice the sessions, so twice the measured use, GPU-hours from it.
    bigger = _argv(tmp_path / "new", "--like", str(like), memory="none,reflection")
    bigger[bigger.index("--users") + 1] = "4"
    plan = _plan(capsys, [*bigger, "--tokens-per-s", "0.5"])
    roles = {r["role"]: r for r in plan["roles"]}
    assert {r: roles[r]["calls"] for r in actual} == {r: 2 * actual[r][0] for r in actual}
    tokens = 2 * sum(c for _, _, c in actual.values())
    assert plan["gpu_hours"] == round(tokens / 0.5 / 3600, 2)
    assert set(plan["gpu_hours_roles"]) == set(actual)


def test_a_role_without_a_model_of_its_own_names_what_it_falls_back_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(tmp_path / "r", memory="reflection")
    argv[argv.index("all=scripted/auto")] = "agent=scripted/echo"
    assert main([*argv, "--plan"]) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    assert "scripted/echo" in rows["agent"] and "its own" in rows["agent"]
    assert "llamacpp/qwen2.5-coder-1.5b" in rows["memory"]
    assert "rapport's default" in rows["memory"] and "rapport's default" in rows["user"]
    # Reflection's calls are not capped by the benchmark: unknown without --like.
    assert rows["memory"].split()[-1] == "unknown"
    assert "differs from the paper: paper protocol not declared" in text
    assert "GPU-hours: give --tokens-per-s N" in text
    assert main([*argv, "--plan", "--tokens-per-s", "50"]) == 0
    assert "GPU-hours: unknown (no role has a completion-token estimate" in capsys.readouterr().out


def test_a_plan_builds_no_model_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a plan built a model")

    monkeypatch.setattr(ModelRoles, "get", refuse)
    monkeypatch.setattr(ModelRoles, "validate", refuse)
    argv = _argv(tmp_path / "r")
    # Weights that do not exist: a run would fail to load them, a plan never tries.
    argv[argv.index("all=scripted/auto")] = f"all=llamacpp/{tmp_path / 'missing.gguf'}"
    plan = _plan(capsys, argv)
    assert {r["model"] for r in plan["roles"]} == {f"llamacpp/{tmp_path / 'missing.gguf'}"}
    assert list(tmp_path.iterdir()) == []


def test_a_large_grid_is_planned_from_counts_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(tmp_path / "r")
    argv[argv.index("--users") + 1] = "1000"
    argv[argv.index("--sessions") + 1] = "10"
    plan = _plan(capsys, argv)
    assert plan["sessions"] == 20_000
    assert {r["role"]: r["calls"] for r in plan["roles"]} == {"agent": 40_000, "user": 40_000}


def test_a_plan_from_a_config_file_lists_what_differs_from_the_paper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(BENCHMARKS, "paper-bench", f"{__name__}:PaperBench")
    config = tmp_path / "exp.yaml"
    config.write_text("benchmark: paper-bench\nusers: 2\nsessions: 3\nmemory: [none]\n")
    argv = ["run", "paper-bench", "--config", str(config), "--model", "all=scripted/auto"]
    assert main([*argv, "--plan"]) == 0
    text = capsys.readouterr().out
    assert "differs from the paper: sessions per user=3 (paper: 20, §5.1)" in text
    assert "sessions per condition: 6; in all: 6" in text
    plan = _plan(capsys, [*argv, "--sessions", "20"])
    assert plan["differs_from_paper"] == []


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--like", "x"], "--like goes with --plan"),
        (["--tokens-per-s", "10"], "--tokens-per-s goes with --plan"),
        (["--plan", "--tokens-per-s", "0"], "--tokens-per-s must be a positive number"),
        (["--plan", "--like", "nowhere"], "--like nowhere"),
        (["--plan", "--memory", "nosuch"], "unknown memory 'nosuch'"),
    ],
)
def test_bad_plan_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], says: str
) -> None:
    assert main(_argv(tmp_path / "r", *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]
    assert not (tmp_path / "r").exists()


def test_like_a_run_of_another_benchmark_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    like = tmp_path / "like"
    argv = ["run", "collab", "--users", "1", "--sessions", "1", "--max-turns", "2"]
    assert (
        main([*argv, "--model", "all=scripted/auto", "--run-dir", str(like), "--no-progress"]) == 0
    )
    capsys.readouterr()
    assert main(_argv(tmp_path / "r", "--plan", "--like", str(like))) == 2
    assert "is a run of 'collab', not of 'scripted'" in capsys.readouterr().err
