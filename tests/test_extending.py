"""docs/extending.md works as written: its memory runs from the command line; plug-ins
register by call and by entry point; a custom agent; `rapport.run` inside an event loop."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import rapport
from rapport.agents import Agent
from rapport.cli import main
from rapport.llm import ModelRoles
from rapport.memory import MEMORIES
from rapport.store import RunStore

DOC = Path(__file__).parents[1] / "docs" / "extending.md"


def _doc_memory() -> str:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mymemory.py`` from the doc, importable; a private RAPPORT_HOME."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "mymemory.py").write_text(_doc_memory())
    monkeypatch.syspath_prepend(str(source))
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    return source


def test_the_doc_memory_is_twenty_lines_or_fewer() -> None:
    code = [line for line in _doc_memory().splitlines() if line.strip()]
    assert len(code) <= 20


def test_the_doc_memory_runs_from_the_command_line(
    plugin_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    argv = ["run", "scripted", "--memory", "none,mymemory:LastWords", "--model"]
    argv += ["all=scripted/auto", "--users", "2", "--sessions", "3", "--no-progress"]
    assert main([*argv, "--run-dir", str(run_dir)]) == 0
    assert "mymemory:LastWords" in capsys.readouterr().out
    with RunStore(run_dir, create=False) as store:
        records = store.sessions("mymemory:LastWords")
        versions = store.memory_versions("mymemory:LastWords")
    assert len(records) == 6 and all(r.status == "ok" for r in records)
    assert any(v.state.items for v in versions)
    assert any(e.kind == "context" for r in records for e in r.events)  # it told the agent


def test_a_memory_registers_by_name_and_by_entry_point(
    plugin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rapport.register_memory("last_words", "mymemory:LastWords")
    try:
        assert main(_run(tmp_path / "a", "last_words")) == 0
    finally:
        MEMORIES.pop("last_words", None)
    dist = plugin_dir / "mymemory_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mymemory-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rapport.memories]\nlast_words2 = mymemory:LastWords\n")
    from rapport.llm import _registry

    monkeypatch.setattr(_registry, "_LOADED", {})
    try:
        assert main(_run(tmp_path / "b", "last_words2")) == 0
    finally:
        MEMORIES.pop("last_words2", None)


def _run(run_dir: Path, memory: str) -> list[str]:
    return [
        "run", "scripted", "--memory", memory, "--model", "all=scripted/auto", "--users", "1",
        "--sessions", "2", "--no-progress", "--run-dir", str(run_dir),
    ]  # fmt: skip


def test_a_custom_agent_factory_plays_every_session(plugin_dir: Path, tmp_path: Path) -> None:
    built: list[Agent] = []

    def factory(models: ModelRoles) -> Agent:
        built.append(Agent(models.get("agent")))
        return built[-1]

    config = rapport.ExperimentConfig(
        benchmark="scripted", memory=["none"], users=1, sessions=2, max_turns=1,
        run_dir=tmp_path / "r", models={"all": "scripted/auto"},
    )  # fmt: skip
    result = rapport.run(config, agent_factory=factory, progress=False)
    assert result.sessions_run == 2 and len(built) == 2


async def test_rapport_run_works_inside_a_running_event_loop(
    plugin_dir: Path, tmp_path: Path
) -> None:
    asyncio.get_running_loop()  # as in Jupyter
    config = rapport.ExperimentConfig(
        benchmark="scripted", memory=["mymemory:LastWords"], users=1, sessions=2,
        max_turns=1, run_dir=tmp_path / "r", models={"all": "scripted/auto"},
    )  # fmt: skip
    result = rapport.run(config, progress=False)
    assert result.sessions_run == 2 and result.errors == 0
