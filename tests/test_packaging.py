"""What installing rapport brings: test-only packages stay in the test dependencies, and
``make install`` asks for extras that exist."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TEST_ONLY = ("pingouin",)
"""Packages only tests use (our statistics are checked against them)."""


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_test_only_packages_are_test_dependencies_only() -> None:
    extras: dict[str, list[str]] = PROJECT["optional-dependencies"]
    for package in TEST_ONLY:
        assert package in _names(extras["dev"])
        assert package not in _names(PROJECT["dependencies"])
        users = [name for name, reqs in extras.items() if name != "dev" and package in _names(reqs)]
        assert users == [], f"{package} is in the extras {users}"


def test_make_install_names_only_extras_that_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(r"^EXTRAS := (.+)$", makefile, re.MULTILINE)
    assert match is not None
    wanted = set(match.group(1).split(","))
    assert wanted <= set(PROJECT["optional-dependencies"]) and "dev" in wanted


def test_every_data_file_in_the_package_is_shipped() -> None:
    """A template or data file that no package-data pattern names is missing from a regular
    (non-editable) install."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["*"]
    source = ROOT / "src" / "rapport"
    unshipped = [
        str(p.relative_to(source))
        for p in source.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix not in (".py", ".pyc")
        and not any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns)
    ]
    assert unshipped == []


def test_the_distribution_is_not_pypis_other_rapport() -> None:
    """``rapport`` on PyPI is another project's (a 2013 report generator): ours installs as
    rapport-toolkit, and no install hint or doc points at the other one."""
    assert PROJECT["name"] == "rapport-toolkit"
    assert PROJECT["scripts"] == {"rapport": "rapport.cli:main"}
    assert "build" in _names(PROJECT["optional-dependencies"]["dev"])
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "src").rglob("*.py")]
    wrong = re.compile(r"pip install '?rapport(?![-\w])")
    found = [str(p.relative_to(ROOT)) for p in texts if wrong.search(p.read_text("utf-8"))]
    assert found == []


def test_rapport_version_names_the_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from rapport import __version__
    from rapport.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"rapport {__version__} (rapport-toolkit)\n"
