"""Makes the runner test doubles importable (also by name, from the registries)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from runner_fakes import registered

__all__ = ["registered"]
