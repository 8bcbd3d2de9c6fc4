"""A benchmark run against a running memory service gives the sessions the same memory gives
inside the runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rapport.envs import benchmark_class, memory_options_for
from rapport.eval import ExperimentConfig, run
from rapport.llm import ModelRoles
from rapport.service import MemoryHub, ServiceSettings, create_app
from rapport.service._serve import running
from rapport.store import RunStore


def _config(tmp_path: Path, name: str, memory: str, options: dict[str, Any]) -> ExperimentConfig:
    return ExperimentConfig(
        benchmark="collab",
        memory=[memory],
        users=2,
        sessions=3,
        max_turns=4,
        seed=3,
        models={"all": "scripted/auto"},
        options={"problems": "generated"},
        memory_options=options,
        run_dir=tmp_path / name,
        cache=False,
    )


def _sessions(run_dir: Path) -> list[tuple[str, int, dict[str, float], list[str]]]:
    store = RunStore.open_readonly(run_dir)
    try:
        return [(r.user_id, r.index, r.scores, [t.text for t in r.turns]) for r in store.sessions()]
    finally:
        store.close()


def test_collab_on_the_service_equals_collab_on_reflection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = _config(tmp_path, "inside", "reflection", {})
    run(inside, progress=False)
    defaults = benchmark_class("collab").memory_defaults
    options = memory_options_for(inside, defaults, {"reflection"}).get("reflection", {})
    # The run's seed, as the runner gives its memory: sampling seeds derive from it.
    models = ModelRoles({"all": "scripted/auto"}, seed=inside.seed)
    hub = MemoryHub.open("reflection", tmp_path / "m.sqlite", models=models, options=options)
    hub.store.add_tenant("lab")
    hub.store.add_key("lab", "rk-lab")
    monkeypatch.setenv("RAPPORT_MEMORY_KEY", "rk-lab")
    with running(create_app(hub, ServiceSettings(rate_per_min=0))) as url:
        served = _config(tmp_path, "served", "service", {"service": {"url": url}})
        run(served, progress=False)
    inside_sessions, served_sessions = (
        _sessions(tmp_path / "inside"),
        _sessions(tmp_path / "served"),
    )
    assert len(inside_sessions) == 6
    assert served_sessions == inside_sessions
    assert hub.export("user-000", tenant="lab")["version"] == 3
