"""The distribution: ``python -m build`` makes a wheel and an sdist named rapport-toolkit (the
name ``rapport`` on PyPI is another project's), and the wheel, installed in a fresh venv,
runs README's light start as written against ``rapport serve-model --model scripted/auto``.

The fresh venv gets the wheel with ``--no-deps``, then the core dependencies at the versions
this environment has (pip takes them from its cache, else from PyPI)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rapport import __version__

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
LIGHT_START = "## Light start"


def _source_tree(dest: Path) -> Path:
    """The project's tracked files (what an sdist starts from), without build leftovers."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    names = [n for n in listed.stdout.decode().split("\0") if n] if not listed.returncode else []
    if not names:
        pytest.skip("needs a git checkout to know the project's files")
    for name in names:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def light_start_commands() -> list[str]:
    """README's light-start block: its ``rapport`` commands, continuations joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(LIGHT_START) :]
    block = section.split("```")[1]
    commands, pending = [], ""
    for raw in block.splitlines():
        line = f"{pending} {raw.strip()}" if pending else raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
        elif line.startswith("rapport "):
            commands.append(line)
    return commands


def _constraints(path: Path) -> Path:
    """Every distribution of this environment at its version, for pip to stay on them."""
    pins = {
        d.metadata["Name"].lower(): d.version
        for d in importlib.metadata.distributions()
        if d.metadata["Name"] and d.metadata["Name"].lower() not in ("rapport", "rapport-toolkit")
    }
    path.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pins.items())))
    return path


def _core_requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(meta).decode().splitlines()
    return [
        line.split(":", 1)[1].strip()
        for line in lines
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]


def _run(*argv: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=900, **kwargs
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    work = tmp_path_factory.mktemp("build")
    source = _source_tree(work / "source")
    out = work / "dist"
    _run(sys.executable, "-m", "build", "--outdir", out, source)
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    _run(sys.executable, "-m", "venv", home / "venv")
    python = home / "venv" / "bin" / "python"
    wheel = next(dist.glob("*.whl"))
    _run(python, "-m", "pip", "install", "-q", "--no-deps", wheel)
    pins = _constraints(home / "constraints.txt")
    _run(python, "-m", "pip", "install", "-q", "-c", pins, *_core_requirements(wheel))
    return home / "venv"


def test_build_makes_a_wheel_and_an_sdist_named_rapport_toolkit(dist: Path) -> None:
    names = sorted(p.name for p in dist.iterdir())
    assert names == [
        f"rapport_toolkit-{__version__}-py3-none-any.whl",
        f"rapport_toolkit-{__version__}.tar.gz",
    ]


def test_the_wheel_holds_the_package_and_the_command(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "rapport = rapport.cli:main" in archive.read(points).decode()
    assert "rapport/view/templates/base.html" in names
    assert not any(n.startswith("tests/") for n in names)


@pytest.fixture
def served(venv: Path, tmp_path: Path) -> Iterator[str]:
    """``rapport serve-model --model scripted/auto --port 0`` from the venv; its base URL."""
    proc = subprocess.Popen(
        [venv / "bin" / "rapport", "serve-model", "--model", "scripted/auto", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAPPORT_HOME": str(tmp_path / "home")},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # blocks until the server says where it serves
    match = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", first)
    try:
        assert match, first
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_the_installed_wheel_runs_the_light_start_as_written(
    venv: Path, served: str, tmp_path: Path
) -> None:
    bin_dir = venv / "bin"
    version = _run(bin_dir / "rapport", "--version").stdout
    assert version.strip() == f"rapport {__version__} (rapport-toolkit)"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "OPENAI_BASE_URL": served,
        "OPENAI_API_KEY": "unused",
        "RAPPORT_HOME": str(tmp_path / "home"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    commands = light_start_commands()
    assert any(c.startswith("rapport compare") for c in commands)
    for command in commands:
        argv = shlex.split(command.replace("openai/MODEL", "openai/auto"), comments=True)
        if argv[1] == "view":
            continue  # a server that runs until stopped; tests/view covers it
        if argv[1] == "run":
            argv.append("--no-progress")
        done = _run(bin_dir / argv[0], *argv[1:], cwd=tmp_path, env=env)
        if argv[1] == "compare":
            assert "Paired differences between runs" in done.stdout, done.stdout
    assert (tmp_path / "compare.html").is_file()
    assert (tmp_path / "runs" / "collab" / "sessions.jsonl").is_file()
    where = _run(
        bin_dir / "python", "-c", "import rapport; print(rapport.__file__)", env=env
    ).stdout
    assert where.startswith(str(venv)), where
