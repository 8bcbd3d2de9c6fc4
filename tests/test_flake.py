"""`make flake`'s tally: repeated node ids fold back into their test, and every failed
phase of a run counts once."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace

FLAKE = Path(__file__).resolve().parent.parent / ".ci" / "flake"


def _flake() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("rapport_ci_flake", str(FLAKE))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_a_repeated_node_id_folds_back_into_its_test() -> None:
    test_of = _flake().test_of
    assert test_of("tests/a.py::t[3-20]") == "tests/a.py::t"
    assert test_of("tests/a.py::t[2-main-130-17-20]") == "tests/a.py::t[2-main-130]"
    assert test_of("tests/a.py::t[x]") == "tests/a.py::t[x]"


def test_failures_are_counted_per_test_and_in_the_total() -> None:
    tally = _flake().Tally()
    for run in (1, 2, 3):
        for when, outcome in (("setup", "passed"), ("call", "failed" if run == 2 else "passed")):
            nodeid = f"tests/a.py::t[{run}-3]"
            report = SimpleNamespace(
                nodeid=nodeid, when=when, failed=outcome == "failed", skipped=False
            )
            tally.pytest_runtest_logreport(report)
        teardown = SimpleNamespace(nodeid=nodeid, when="teardown", failed=run == 2, skipped=False)
        tally.pytest_runtest_logreport(teardown)
    lines = tally.lines()
    assert "    1 / 3   tests/a.py::t" in lines
    assert lines[-1] == "flake: 1 failures in 3 runs of 1 tests (0 skipped)"
