"""The study in a real browser, as a participant meets it: open the invite, consent with
the keyboard, read the card, chat through three sessions, fill every survey; then the
researcher's page shows those sessions. Agent output carrying script never runs.

Each page is screenshotted into the test's directory, or into ``$RAPPORT_STUDY_SHOTS``
(how docs/img/study/ is made)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rapport.llm import Request
from rapport.study import StudyCreated, create_study, start_study_server

from ..view.browser import browser_page
from .helpers import DESIGN, scripted_roles
from .test_security import PAYLOADS

pytestmark = pytest.mark.race


def _shots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("RAPPORT_STUDY_SHOTS") or tmp_path / "shots")
    where.mkdir(parents=True, exist_ok=True)
    return where


def _tab_to(page: Any, element_id: str, limit: int = 30) -> None:
    """Move the keyboard focus with Tab until it reaches the element."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
    raise AssertionError(f"Tab never reached #{element_id}")


def _on_chat_page(page: Any, address: str) -> None:
    """Wait until the browser shows the session page at `address` with its script run.

    A click on a link returns once the navigation started; the old page may still be shown
    and the new one's `#chat` may not be parsed yet. The page's script is deferred, so it has
    run (and bound its handlers) once the DOM is loaded."""
    page.wait_for_url(address)
    page.wait_for_load_state("domcontentloaded")
    page.locator("#chat").wait_for(state="attached")


def _chat(page: Any, text: str) -> None:
    """Type a message with the keyboard, send it with Ctrl+Enter, wait for the reply.

    The page's script (deferred) binds Ctrl+Enter; it has run once the DOM is loaded."""
    page.wait_for_load_state("domcontentloaded")
    replies = page.locator("#chat li.msg.agent").count()
    _tab_to(page, "text")
    page.keyboard.type(text)
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('#chat li.msg.agent').length > n"
        " && document.getElementById('chat').dataset.state === 'listening'",
        arg=replies,
    )


def _survey(page: Any, rating: int, feedback: str, first: bool) -> None:
    """Answer every question with the keyboard: Tab into each radio group, arrows to the
    answer (memory is fixed in a part's first session); then the free text, and Enter on
    the button."""
    rated = [i for i in ("adherence", "memory", "impact", "confidence", "satisfaction")
             if not (first and i == "memory")]  # fmt: skip
    for item in rated:
        _tab_to(page, f"{item}-1")
        page.keyboard.press("Space")
        for _ in range(rating - 1):
            page.keyboard.press("ArrowDown")
        assert page.is_checked(f"#{item}-{rating}")
    _tab_to(page, "feedback")
    page.keyboard.type(feedback)
    _tab_to(page, "own_preferences")
    page.keyboard.type(f"also {feedback}")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")


_ROWS_OF_OPTIONS = """
[...document.querySelectorAll('fieldset')].map(f => {
  const radios = [...f.querySelectorAll('input[type=radio]')];
  const tops = radios.map(r => Math.round(r.getBoundingClientRect().top));
  const labels = radios.map(r => {
    const box = r.labels[0].getBoundingClientRect(), own = r.getBoundingClientRect();
    return own.top >= box.top - 4 && own.top <= box.bottom;
  });
  return {id: f.id, radios: tops.length, rows: new Set(tops).size,
          besideLabel: labels.every(x => x)};
})
"""


def _phone_survey(page: Any, shots: Path) -> None:
    """At 390 px each anchored answer is one row with its radio beside its words (never
    split from them), and the page does not scroll sideways."""
    page.set_viewport_size({"width": 390, "height": 844})
    groups = page.evaluate(_ROWS_OF_OPTIONS)
    assert [g["id"] for g in groups] == [
        "q-adherence", "q-memory", "q-impact", "q-confidence", "q-satisfaction"
    ]  # fmt: skip
    for g in groups:
        if g["radios"]:
            assert g["rows"] == g["radios"] and g["besideLabel"], g
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(shots / "survey.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(shots / "survey-1280.png"), full_page=True)
    page.set_viewport_size({"width": 1000, "height": 900})


def test_a_participant_does_three_sessions_and_the_researcher_sees_them(
    study: StudyCreated, tmp_path: Path
) -> None:
    shots = _shots(tmp_path)
    token = study.tokens["p01"]
    with (
        start_study_server(study.study_dir, models=scripted_roles()) as url,
        browser_page() as page,
    ):
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        page.goto(f"{url}/p/{token}")
        assert page.locator("h1").inner_text() == "Before you start"
        page.screenshot(path=str(shots / "consent.png"), full_page=True)
        _tab_to(page, "agree")
        page.keyboard.press("Space")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.locator("#card-title").wait_for()
        card = page.locator("section.card ul li")
        assert card.count() == 4 and "camelCase names" in card.all_inner_texts()[3]
        parts = page.locator("h2[id^=part-]").all_inner_texts()
        assert len(parts) == 4 and parts[0] == "Part 1: Single-domain coding"
        page.screenshot(path=str(shots / "home.png"), full_page=True)
        page.set_viewport_size({"width": 1000, "height": 900})
        for session in (1, 2, 3):
            page.click("ol.sessions li.ready a")
            _on_chat_page(page, f"{url}/p/{token}/s/{session}")
            assert page.locator("h1").inner_text().startswith(f"Part 1, session {session}")
            _chat(page, f"Can you help me start session {session}?")
            _chat(page, "What is the next step?")
            assert page.locator("#chat li.msg").count() == 4
            if session == 1:
                page.screenshot(path=str(shots / "session.png"), full_page=True)
            page.click("#end-link")
            page.click("#end-button")
            page.wait_for_url(f"{url}/p/{token}/s/{session}/survey")
            if session == 1:
                _phone_survey(page, shots)
            _survey(page, 5 - session, f"session {session} felt fine", session == 1)
            page.locator(f"section:has(#part-1) li:nth-child({session}).done").wait_for()
        unlabeled = page.evaluate(
            "[...document.querySelectorAll('input:not([type=hidden]), textarea')]"
            ".filter(e => !e.labels || e.labels.length === 0).length"
        )
        assert unlabeled == 0
        page.goto(f"{url}/r/{study.researcher_token}/")
        body = page.locator("main").inner_text()
        assert "3 / 12" in body
        assert "session 1 felt fine" in body and "session 3 felt fine" in body
        survey_rows = page.locator("table:has(caption:has-text('per session, median')) tbody tr")
        assert survey_rows.count() == 3
        page.set_viewport_size({"width": 1280, "height": 900})
        assert page.evaluate("document.querySelector('main').clientWidth") > 1200
        clipped = page.evaluate(
            "[...document.querySelectorAll('.wide')].filter(d => d.scrollWidth > d.clientWidth)"
            ".map(d => d.querySelector('caption').textContent)"
        )
        assert clipped == []
        page.screenshot(path=str(shots / "researcher.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(shots / "researcher-390.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 900})
        page.click("text=p01")
        assert page.locator("h1").inner_text() == "Participant p01"
        assert "session 1 felt fine" in page.locator("main").inner_text()
    sizes = {p.name: p.stat().st_size for p in shots.iterdir()}
    assert {"consent.png", "home.png", "session.png", "survey.png", "researcher.png"} <= set(sizes)


_WATCH_DRAFT = """
window.__draftElements = 0;
window.__draftSawMarkup = false;
new MutationObserver(records => {
  for (const r of records) {
    const body = r.target.nodeType === 1 ? r.target.closest('li.draft .body') : null;
    if (!body) { continue; }
    window.__draftElements += [...r.addedNodes].filter(n => n.nodeType === 1).length;
    if (body.textContent.includes('<script>')) { window.__draftSawMarkup = true; }
  }
}).observe(document.getElementById('chat'), {childList: true, subtree: true});
"""


def _hostile(request: Request) -> str:
    return "Try this:\n\n" + "\n\n".join(PAYLOADS)


@pytest.mark.attack
def test_script_in_agent_output_never_runs(tmp_path: Path) -> None:
    made = create_study(DESIGN, 1, tmp_path / "study")
    token = made.tokens["p01"]
    dialogs: list[str] = []
    # Streamed a word every 20 ms, so the page shows the reply while it is generated.
    roles = scripted_roles(_hostile, stream_delay=0.02)
    with (
        start_study_server(made.study_dir, models=roles) as url,
        browser_page() as page,
    ):
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/p/{token}")
        page.check("#agree")
        page.click("text=Start the study")
        page.click("ol.sessions li.ready a")
        _on_chat_page(page, f"{url}/p/{token}/s/1")
        page.evaluate(_WATCH_DRAFT)
        page.fill("#text", "hello")
        page.click("#send-button")
        page.wait_for_function(
            "() => document.querySelector('#chat li.msg.agent:not(.draft)')"
            " && document.getElementById('chat').dataset.state === 'listening'"
        )
        # While streaming, the reply was text: its markup showed as characters, no elements.
        assert page.evaluate("window.__draftSawMarkup") is True
        assert page.evaluate("window.__draftElements") == 0
        assert page.locator("#chat li.draft").count() == 0  # the stored reply replaced it
        page.locator("#chat li.msg.agent .body").first.wait_for()
        for link in page.locator("#chat li.msg.agent a").all():
            link.click()
        assert page.evaluate("window.__xss === undefined")
        page.reload()  # the stored reply, rendered by the server this time
        # `load` comes after every subresource loaded or failed: an onerror would have run.
        page.wait_for_load_state("load")
        page.locator("#chat li.msg.agent").first.wait_for()
        assert page.evaluate("window.__xss === undefined")
        found = page.evaluate(
            """[...document.querySelectorAll('#chat *')].flatMap(e =>
                 [...e.attributes].filter(a => a.name.startsWith('on')
                   || /^\\s*(javascript|data):/i.test(a.value)).map(a => a.name)
               ).concat([...document.querySelectorAll(
                 '#chat script, #chat iframe, #chat svg, #chat img')].map(e => e.tagName))"""
        )
        assert found == []
        assert "window.__xss" in page.locator("#chat").inner_text()  # shown as text
    assert dialogs == []
