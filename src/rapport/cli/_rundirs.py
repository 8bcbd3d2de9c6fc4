"""Where a new run goes when no run dir is named: its own dir under ``runs/``, named by
benchmark, start time and a short random id (``runs/collab-20261128-083512-3f9a1c``), as
inspect's logs are; ``runs/latest`` points at the newest one."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from rapport.eval import ExperimentConfig

RUNS = Path("runs")
"""The folder new runs go in (relative to the working directory)."""
LATEST = "latest"
"""The link in `RUNS` to the newest run started without a run dir."""


def new_run_dir(benchmark: str, *, root: Path = RUNS, now: float | None = None) -> Path:
    """A dir for a new run of `benchmark` that no other run has: ``root/<benchmark>-<local
    time>-<6 hex digits>`` (two runs of one benchmark in one second differ by the id)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return root / f"{benchmark}-{stamp}-{uuid.uuid4().hex[:6]}"


def with_new_run_dir(config: ExperimentConfig) -> ExperimentConfig:
    """`config` as it is when it names its run dir (a flag or a config file's key), else
    with a new one (`new_run_dir`), which then counts as named."""
    if "run_dir" in config.model_fields_set:
        return config
    return config.model_copy(update={"run_dir": new_run_dir(config.benchmark)})


def point_latest(run_dir: Path) -> Path | None:
    """Make ``runs/latest`` a link to `run_dir` when `run_dir` is in ``runs/``; returns the
    link, or None where there is none to make (another folder, or a ``latest`` that is a
    real dir, which is left as it is)."""
    if run_dir.parent != RUNS:
        return None
    link = RUNS / LATEST
    if link.exists() and not link.is_symlink():
        return None
    staged = RUNS / f".{LATEST}-{uuid.uuid4().hex[:8]}"
    try:
        staged.symlink_to(run_dir.name, target_is_directory=True)
        os.replace(staged, link)  # atomic: a reader sees the old run or the new one
    except OSError:
        staged.unlink(missing_ok=True)
        return None
    return link
