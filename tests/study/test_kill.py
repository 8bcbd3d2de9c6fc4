"""``kill -9`` of a study server mid-session loses nothing: every message it acknowledged
is stored, and after a restart the participant reloads and goes on, the agent answering a
message whose reply the killed server never sent."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from rapport.store import RunStore
from rapport.study import SessionKey, StudyDB, create_study

from .helpers import DESIGN, Participant

pytestmark = [pytest.mark.attack, pytest.mark.race]

_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


@contextmanager
def server(study_dir: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``rapport study serve DIR --port 0`` in its own process; yields it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rapport", "study", "serve", str(study_dir), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = _URL.search(line)
        assert found, f"no URL in {line!r}"
        yield proc, f"http://127.0.0.1:{found.group(1)}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def test_kill_9_mid_session_loses_nothing(tmp_path: Path) -> None:
    made = create_study(DESIGN, 2, tmp_path / "study", models={"all": "scripted/auto"})
    token, key = made.tokens["p01"], SessionKey("p01", "none", 0)
    with server(made.study_dir) as (proc, url):
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{token}")
        p.consent()
        for text in ("my first question", "a follow-up"):
            sent = p.send(1, text)
            assert sent.status_code == 200
            p.reply(1, sent.json()["stored"])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    db = StudyDB(made.study_dir)
    try:
        stored = db.messages(key)
        assert [m.speaker for m in stored] == ["user", "agent", "user", "agent"]
        assert [stored[0].text, stored[2].text] == ["my first question", "a follow-up"]
        # A message acknowledged by a server killed before its agent replied.
        db.add_message(key, "user", "sent just before the crash")
    finally:
        db.close()
    with server(made.study_dir) as (proc, url):
        p = Participant(httpx.Client(base_url=url, timeout=60), f"/p/{token}")
        page = p.open()
        assert page.status_code == 200
        chat = p.page(1).text
        assert "my first question" in chat and "sent just before the crash" in chat
        p.reply(1, 4)  # the restarted server answers the pending message
        sent = p.send(1, "going on after the reload")
        assert sent.status_code == 200 and sent.json()["stored"] == 6
        p.reply(1, 6)
        assert p.end(1).status_code == 303
        assert p.survey(1).status_code == 303
        p.wait_saved(1)
        os.kill(proc.pid, signal.SIGKILL)
    with RunStore.open_readonly(made.study_dir) as store:
        record = store.session("none", "p01", 0)
    assert record is not None and record.status == "ok"
    assert [t.text for t in record.turns if t.speaker == "user"] == [
        "my first question",
        "a follow-up",
        "sent just before the crash",
        "going on after the reload",
    ]
    assert record.scores["length"] == 8 and record.scores["adherence"] == 4
