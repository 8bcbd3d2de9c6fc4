"""rapport: agents that learn how each person likes to work, across sessions."""

from __future__ import annotations

import os
from pathlib import Path

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


__all__ = ["__version__", "models_home", "rapport_home"]
