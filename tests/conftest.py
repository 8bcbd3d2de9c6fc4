"""Shared fixtures. Real-model tests take a machine-wide lock: two llama.cpp processes on two
cores run ~25x slower, so they must never overlap, even across concurrent pytest runs."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from rapport import models_home

# Tests never assert on time: a property test on a loaded machine must not fail on
# hypothesis's per-example deadline.
settings.register_profile("rapport", deadline=None)
settings.load_profile("rapport")


@pytest.fixture(autouse=True)
def _one_llama_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("real_model") is None:
        yield
        return
    lock_path = Path(tempfile.gettempdir()) / "rapport-llama.lock"
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# The machine's model files, read once before any test hides the machine's RAPPORT_HOME.
_MACHINE_MODELS = str(models_home())


@pytest.fixture(autouse=True)
def rapport_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs with a private, empty RAPPORT_HOME (no response cache, no embedding
    export, nothing an earlier run left); the joined model files stay reachable through
    RAPPORT_MODELS. A test that needs a warm cache builds it in this home itself."""
    home = tmp_path_factory.mktemp("rapport-home")
    monkeypatch.setenv("RAPPORT_HOME", str(home))
    monkeypatch.setenv("RAPPORT_MODELS", _MACHINE_MODELS)
    os.makedirs(home, exist_ok=True)
    return home


@pytest.fixture
def own_models(rapport_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For tests that join or list model files: the private home's own, empty models folder
    instead of the machine's (``$RAPPORT_HOME/models``); returns the home."""
    monkeypatch.delenv("RAPPORT_MODELS")
    return rapport_home
