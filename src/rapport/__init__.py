"""rapport: agents that learn how each person likes to work, across sessions."""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"


def rapport_home() -> Path:
    """Where models and the response cache live: ``$RAPPORT_HOME``, else ``~/.cache/rapport``."""
    return Path(os.environ.get("RAPPORT_HOME") or Path.home() / ".cache" / "rapport")


__all__ = ["__version__", "rapport_home"]
