"""Shared fixtures. Real-model tests take a machine-wide lock: two llama.cpp processes on two
cores run ~25x slower, so they must never overlap, even across concurrent pytest runs."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


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


@pytest.fixture
def rapport_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private RAPPORT_HOME for tests that write caches (the model files are not there)."""
    home = tmp_path / "rapport-home"
    monkeypatch.setenv("RAPPORT_HOME", str(home))
    os.makedirs(home, exist_ok=True)
    return home
