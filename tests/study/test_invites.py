"""``rapport study revoke`` and ``create --invite-days``: invites that stop working."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.study import StudyCreated, StudyDB

from .helpers import DESIGN

pytestmark = pytest.mark.attack


def test_revoke_stops_an_invite_and_refuses_an_unknown_name(
    study: StudyCreated, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", "revoke", str(study.study_dir), "p01", "p09"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "p09" in err[0]
    db = StudyDB(study.study_dir)
    try:
        assert db.participant_by_token(study.tokens["p01"]) is not None  # nothing revoked
        assert main(["study", "revoke", str(study.study_dir), "p01"]) == 0
        assert db.participant_by_token(study.tokens["p01"]) is None
        assert db.participant_by_token(study.tokens["p02"]) is not None
    finally:
        db.close()


def test_invites_can_be_made_to_expire(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "study"
    args = ["study", "create", str(DESIGN), "--participants", "2", "--out", str(out)]
    assert main([*args, "--invite-days", "0"]) == 2
    assert not out.exists()
    assert main([*args, "--invite-days", "0.00000001"]) == 0
    token = next(
        line.split("/p/")[1] for line in capsys.readouterr().out.splitlines() if "/p/" in line
    )
    db = StudyDB(out)
    try:
        assert db.participant_by_token(token) is None  # under a millisecond: long past
    finally:
        db.close()
