"""What a study is served with, recorded in its run store at each ``rapport study serve``
as a run records each invocation: python, platform, packages, the code's revision, the
models with their weights or servers, and each memory's settings."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rapport import __version__
from rapport.envs.study import SESSIONS
from rapport.eval import describe_models, git_revision, package_versions
from rapport.log import Invocation

if TYPE_CHECKING:
    from ._live import StudyRuntime

STUDY_PACKAGES = ("starlette", "uvicorn", "jinja2", "markdown-it-py", "nh3")
"""The distributions the study app's pages depend on, beside a run's."""


def describe_serving(runtime: StudyRuntime) -> Invocation:
    """Everything one ``serve`` of the study runs with."""
    revision, dirty = git_revision(Path(__file__).resolve().parent)
    people = runtime.benchmark.options.assignments
    return Invocation(
        rapport_version=__version__,
        python=sys.version.split()[0],
        platform=platform.platform(),
        git_revision=revision,
        git_dirty=dirty,
        packages=package_versions() | package_versions(STUDY_PACKAGES),
        models=describe_models(runtime.models),
        retrieval={name: m.describe() for name, m in runtime.memories.items()},
        memory_settings={name: m.effective_options() for name, m in runtime.memories.items()},
        planned_sessions=sum(len(a.blocks) * SESSIONS for a in people),
    )


def record_serving(runtime: StudyRuntime) -> None:
    """Add this serve's description to the study's run store."""
    runtime.store.add_invocation(describe_serving(runtime))
