"""Participant free text printed by ``rapport report``: control characters never reach the
terminal as such, and Markdown shows HTML as text."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from rapport.cli import main
from rapport.envs.study import ITEM_IDS, SurveyAnswers
from rapport.log import Table
from rapport.report import markdown_table, printable, render_table
from rapport.study import SessionKey, StudyDB, create_study, start_study_server

from .helpers import DESIGN, Participant, scripted_roles

pytestmark = pytest.mark.attack

HOSTILE = [
    "\x1b]0;pwned\x07",  # OSC: set the terminal's title
    "\x1b]52;c;cm0gLXJmIH4=\x07",  # OSC 52: write the clipboard
    "\x1b[2J\x1b[H",  # clear the screen
    "over\rwritten",
    "\u202eevil\u202c",  # right-to-left override
    "\x9b31m",  # C1 CSI
]
HTML = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]


def _table(cells: list[str]) -> Table:
    return Table(title="feedback \x1b[31m", columns=["participant", "feedback"],
                 rows=[["p01", c] for c in cells])  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_control_characters_are_shown_not_acted_on(text: str) -> None:
    shown = printable(text)
    assert not any(
        ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or 0x202A <= ord(c) <= 0x202E for c in shown
    )
    assert printable("tab\tand\nnewline stay") == "tab\tand\nnewline stay"
    for rendered in (render_table(_table([text])), markdown_table(_table([text]))):
        assert "\x1b" not in rendered and "\x07" not in rendered and "\r" not in rendered


def test_markdown_shows_html_as_text() -> None:
    rendered = markdown_table(_table(HTML))
    assert "<script>" not in rendered and "<img" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered


def _hostile_study(tmp_path: Path, feedback: str) -> Path:
    """A study whose first session's survey feedback is ``feedback``, stored as a study
    made before forms refused control characters holds it."""
    made = create_study(DESIGN, 1, tmp_path / "study")
    path = f"/p/{made.tokens['p01']}"
    with start_study_server(made.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), path)
        p.consent()
        sent = p.send(1, "hello")
        p.reply(1, sent.json()["stored"])
        p.end(1)
    db = StudyDB(made.study_dir)
    try:
        ratings = dict.fromkeys(ITEM_IDS, 3)
        db.put_survey(
            SessionKey("p01", "none", 0),
            SurveyAnswers(ratings=ratings, impact="followed_helped", feedback=feedback),
        )
    finally:
        db.close()
    with start_study_server(made.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), path)
        p.open()  # the session is started again, finds its survey, and is stored
        p.wait_saved(1)
    return made.study_dir


def test_rapport_report_prints_no_escape_sequence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _hostile_study(tmp_path, "".join(HOSTILE) + " " + " ".join(HTML))
    for fmt in ("table", "markdown"):
        assert main(["report", str(run_dir), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
        assert "pwned" in out  # the text is there, shown
        if fmt == "markdown":
            assert "<script>" not in out and "&lt;script&gt;" in out
