"""A study's files on disk: only their owner reads them, a read-only study is read (and
refused for serving) with one line, and a create that fails on a full disk leaves nothing,
so the retry works."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rapport.cli import main
from rapport.study import StudyCreated, create_study, start_study_server

from .helpers import DESIGN, Participant, scripted_roles

pytestmark = pytest.mark.attack


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_participant_data_is_readable_by_its_owner_only(
    study: StudyCreated, capsys: pytest.CaptureFixture[str]
) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{study.tokens['p01']}")
        p.consent()
        p.play(1, ["my private words"], feedback="more private words")
        files = sorted(study.study_dir.iterdir())
        names = {f.name for f in files}
        assert {"study.sqlite-wal", "study.sqlite-shm", "run.sqlite-wal"} <= names
        assert {f.name: _mode(f) for f in files} == {n: 0o600 for n in names}
    assert _mode(study.study_dir) == 0o700
    assert main(["report", str(study.study_dir)]) == 0
    capsys.readouterr()
    assert _mode(study.study_dir / "report.html") == 0o600


def test_serving_an_older_study_makes_its_files_private(study: StudyCreated) -> None:
    os.chmod(study.study_dir, 0o755)
    for f in study.study_dir.iterdir():
        os.chmod(f, 0o644)
    with start_study_server(study.study_dir, models=scripted_roles()):
        pass
    assert _mode(study.study_dir) == 0o700
    assert {_mode(f) for f in study.study_dir.iterdir()} == {0o600}


@pytest.fixture
def frozen(study: StudyCreated) -> Iterator[StudyCreated]:
    """A study whose dir and files cannot be changed, as on a read-only disk."""
    paths = [*study.study_dir.iterdir(), study.study_dir]
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a directory immutable here: {done.stderr.decode().strip()}")
    try:
        yield study
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=False)


def test_a_read_only_study_is_read_and_not_served(
    frozen: StudyCreated, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in frozen.study_dir.iterdir())
    assert main(["study", "status", str(frozen.study_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("participants: 4, consented: 0")
    assert main(["study", "serve", str(frozen.study_dir), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be written" in err[0], err
    assert sorted(p.name for p in frozen.study_dir.iterdir()) == before


_CREATE = """
import sys
from rapport.cli import main
sys.exit(main(["study", "create", sys.argv[1], "--participants", "4", "--out", sys.argv[2]]))
"""


def _small_disk() -> None:
    """In the child: files may grow to 16 KiB (a full disk, as writes see it)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))


def test_a_create_that_fails_on_a_full_disk_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "study"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _CREATE, str(DESIGN), str(out)],
        preexec_fn=_small_disk,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing was kept" in lines[0], done.stderr
    assert not out.exists()
    made = create_study(DESIGN, 4, out)  # the retry
    assert (made.study_dir / "run.sqlite").stat().st_size > 0
