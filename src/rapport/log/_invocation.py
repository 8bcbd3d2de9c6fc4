"""What one invocation of the runner ran with: models, packages, code revision, retrieval."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field


class ModelInfo(BaseModel):
    """The model one role used, pinned down: its spec and the weights or server behind it."""

    role: str
    spec: str
    provider: str = ""
    path: str | None = None
    """The weights file or folder (local providers)."""
    sha256: str | None = None
    """The weights' sha256 (a folder: the sha256 of its files' sorted name/sha256 lines)."""
    base_url: str | None = None
    """The server (remote providers), credentials removed."""


class Invocation(BaseModel):
    """One invocation of the runner on a run dir (a resumed run has several)."""

    started_at: float = Field(default_factory=time.time)
    rapport_version: str = ""
    python: str = ""
    platform: str = ""
    git_revision: str | None = None
    """The project's commit when it runs from a git checkout."""
    git_dirty: bool | None = None
    """Whether tracked files differed from that commit."""
    packages: dict[str, str] = Field(default_factory=dict)
    """Distribution -> version, for the packages results depend on."""
    models: list[ModelInfo] = Field(default_factory=list)
    retrieval: dict[str, str] = Field(default_factory=dict)
    """Condition -> the embedder or retrieval backend its memory actually used."""
    memory_settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Condition -> its memory's options as the memory read them, defaults included."""
    planned_sessions: int | None = None
    """Sessions the run holds when this invocation finishes (all conditions, users and
    splits); None where not recorded."""
