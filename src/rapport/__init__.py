"""rapport: agents that learn how each person likes to work, across sessions."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

__version__ = "0.1.0"


def rapport_home() -> Path:
    """Where models and the response cache live: ``$RAPPORT_HOME``, else ``~/.cache/rapport``."""
    return Path(os.environ.get("RAPPORT_HOME") or Path.home() / ".cache" / "rapport")


def models_home() -> Path:
    """Where the joined model files live: ``$RAPPORT_MODELS``, else ``rapport_home()/models``.

    Its own setting so that a private, empty ``RAPPORT_HOME`` (the tests') can still use the
    model files installed once on the machine.
    """
    return Path(os.environ.get("RAPPORT_MODELS") or rapport_home() / "models")


_LAZY = {
    "ExperimentConfig": "rapport.eval",
    "run": "rapport.eval",
    "run_experiment": "rapport.eval",
    "register_memory": "rapport.memory",
    "register_benchmark": "rapport.envs",
    "register_provider": "rapport.llm",
    "load": "rapport.report",
    "compare_runs": "rapport.report",
}


def __getattr__(name: str) -> Any:
    """The public entry points, imported on first use (``rapport.run``,
    ``rapport.register_memory`` ...), so ``import rapport`` stays light."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rapport' has no attribute '{name}'")


__all__ = [
    "ExperimentConfig",
    "__version__",
    "compare_runs",
    "load",
    "models_home",
    "rapport_home",
    "register_benchmark",
    "register_memory",
    "register_provider",
    "run",
    "run_experiment",
]
