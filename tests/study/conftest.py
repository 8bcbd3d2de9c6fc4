"""A study dir made from the example design, with tokens the tests can use."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.study import StudyCreated, create_study

from .helpers import DESIGN


@pytest.fixture
def study(tmp_path: Path) -> StudyCreated:
    """Four participants (both study types, both condition orders)."""
    return create_study(DESIGN, 4, tmp_path / "study")
