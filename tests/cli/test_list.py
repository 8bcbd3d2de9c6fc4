"""``rapport list``: every name a command line may use, one line each, plug-ins included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.envs import BENCHMARKS, PRESETS, register_preset
from rapport.envs import _registry as envs_registry
from rapport.llm import EMBEDDED_MODELS, _registry
from rapport.memory import MEMORIES

PLUGIN = '''
"""A plug-in's parts."""
from rapport.envs.scripted import ScriptedBenchmark
from rapport.memory import BaseMemory


class EchoBench(ScriptedBenchmark):
    """Scripted sessions under another name, from an installed package."""


class Nothing(BaseMemory):
    """Remembers nothing, from an installed package."""


class Small:
    """Shorter sessions for small models."""
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed package (on sys.path, with a dist-info) declaring a benchmark, a memory
    and a preset by entry point."""
    (tmp_path / "listplug.py").write_text(PLUGIN)
    dist = tmp_path / "listplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: listplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rapport.benchmarks]\necho-bench = listplug:EchoBench\n"
        "[rapport.memories]\nnothing = listplug:Nothing\n"
        "[rapport.presets]\nsmall-plug = listplug:Small\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_registry, "_LOADED", {})
    yield
    BENCHMARKS.pop("echo-bench", None)
    MEMORIES.pop("nothing", None)
    PRESETS.pop("small-plug", None)


def _listed(what: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    assert main(["list", what]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {line.split()[0]: line for line in lines}


def test_benchmarks_and_memories_are_listed_with_plugins(
    plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    benchmarks = _listed("benchmarks", capsys)
    assert {"collab", "mpt", "prefix", "gym", "scripted", "echo-bench"} <= set(benchmarks)
    assert "Scripted sessions under another name" in benchmarks["echo-bench"]
    memories = _listed("memories", capsys)
    assert {"none", "oracle", "reflection", "prime", "nothing"} <= set(memories)
    assert "Remembers nothing, from an installed package" in memories["nothing"]
    assert all(len(line.split(maxsplit=1)) == 2 for line in memories.values())


def test_models_lists_embedded_models_and_providers(capsys: pytest.CaptureFixture[str]) -> None:
    models = _listed("models", capsys)
    assert {m.spec for m in EMBEDDED_MODELS.values()} <= set(models)
    assert {"llamacpp/...", "openai/...", "scripted/..."} <= set(models)


def test_presets_come_from_their_registry(
    plugin: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as bare:  # no plug-ins, no benchmark to declare a preset
        presets: dict[str, str] = {}
        benchmarks: dict[str, str] = {}
        loaded = {"rapport.presets": presets, "rapport.benchmarks": benchmarks}
        bare.setattr(_registry, "_LOADED", loaded)
        bare.setattr(envs_registry, "PRESETS", presets)
        bare.setattr(envs_registry, "BENCHMARKS", benchmarks)
        assert main(["list", "presets"]) == 0
        assert capsys.readouterr().out == "no presets\n"
    assert "small" in _listed("presets", capsys)  # rapport's own
    monkeypatch.setattr(_registry, "_LOADED", {})
    register_preset("tiny", "listplug:Small")
    try:
        presets = _listed("presets", capsys)
    finally:
        PRESETS.pop("tiny", None)
    assert presets["tiny"].split(maxsplit=1)[1] == "Shorter sessions for small models"
    assert "small-plug" in presets
