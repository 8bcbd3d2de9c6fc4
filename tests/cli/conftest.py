"""Shares the runner test doubles of tests/eval."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "eval"))

from runner_fakes import registered

__all__ = ["registered"]
