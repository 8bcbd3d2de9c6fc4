"""A study dir made from the example design, with tokens the tests can use."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rapport.study import StudyCreated, create_study

from .helpers import DESIGN


@pytest.fixture
def study(tmp_path: Path) -> StudyCreated:
    """Four participants (both study types, both condition orders)."""
    return create_study(DESIGN, 4, tmp_path / "study")


@pytest.fixture
def picking_study(tmp_path: Path) -> StudyCreated:
    """The example design with reflection picking its notes before every reply (a memory
    call while the participant waits, so a failing memory shows mid-session)."""
    design = yaml.safe_load(DESIGN.read_text())
    options = design.setdefault("memory_options", {})
    options["reflection"] = {**options.get("reflection", {}), "select": True}
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(design))
    return create_study(path, 4, tmp_path / "study")
