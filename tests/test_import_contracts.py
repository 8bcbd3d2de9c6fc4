"""Each import-linter contract in pyproject.toml catches what it forbids: import-linter,
run on a copy of the package with one module added that breaks a contract, names that
contract broken and the import; on the unchanged copy every contract is kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"

BREAKS = {
    "shared packages know no benchmark": ("report/_peek.py", "rapport.envs.mpt"),
    "benchmarks know no memory method": ("envs/mpt/_peek.py", "rapport.memory.prime"),
    "benchmarks are independent": ("envs/mpt/_peek.py", "rapport.envs.collab"),
}


def _copy(where: Path) -> Path:
    shutil.copytree(
        ROOT / "src" / "rapport",
        where / "src" / "rapport",
        ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.yaml", "*.json", "*.svg"),
    )
    shutil.copy(ROOT / "pyproject.toml", where / "pyproject.toml")
    return where


def _lint(where: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(where / "src")}
    done = subprocess.run(
        [str(LINT), "--no-cache", "--no-logo", str(where / "pyproject.toml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=where,
        check=False,
    )
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(tmp_path_factory.mktemp("clean"))


def test_the_unchanged_package_keeps_every_contract(clean: Path) -> None:
    out = _lint(clean)
    assert out.startswith("exit 0") and "0 broken" in out, out
    assert all(f"{name} KEPT" in out for name in BREAKS), out


@pytest.mark.parametrize("contract", sorted(BREAKS))
def test_a_module_that_breaks_a_contract_is_caught(contract: str, tmp_path: Path) -> None:
    where = _copy(tmp_path)
    module, imported = BREAKS[contract]
    (where / "src" / "rapport" / module).write_text(f"import {imported}  # the violation\n")
    out = _lint(where)
    assert out.startswith("exit 1") and f"{contract} BROKEN" in out, out
    importer = "rapport." + module.removesuffix(".py").replace("/", ".")
    assert importer in out and imported in out, out
    kept = [name for name in BREAKS if name != contract and f"{name} KEPT" in out]
    assert len(kept) == len(BREAKS) - 1, out
