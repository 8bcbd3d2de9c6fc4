"""The viewer in a real browser: click from the summary to a session, see the recalled
memory and the enforcement at their turns, open the side-by-side and memory-diff pages;
each page is screenshotted into the test's output directory. After each click the test waits
for the page it leads to (a click returns once the navigation started, not finished)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.view import start_server

from .browser import browser_page
from .conftest import NOTE

pytestmark = pytest.mark.race


def test_click_through_a_scripted_run(scripted_run: Path, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with start_server(scripted_run) as url, browser_page() as page:
        page.goto(url + "/")
        assert page.locator("table caption").first.inner_text().startswith("collab")
        page.screenshot(path=str(shots / "summary.png"), full_page=True)

        page.click("text=reflection: sessions")
        page.wait_for_url("**/sessions?*")
        page.click("tr:has-text('user-000') >> text=session 2")
        page.wait_for_url("**/session/reflection/user-000/2")
        recall = page.locator("#turn-1 .event.recall")
        assert NOTE in recall.inner_text()
        enforcement = page.locator("#turn-2 .event.enforcement").first
        assert "the user enforced" in enforcement.inner_text()
        page.screenshot(path=str(shots / "session.png"), full_page=True)

        page.click("text=side by side with none")
        page.wait_for_url("**/compare/**")
        page.locator("table.compare").wait_for()
        assert page.locator("table.compare th a").all_inner_texts() == [
            "reflection · session 2",
            "none · session 2",
        ]
        assert page.locator("#turn-1").count() == 2
        page.screenshot(path=str(shots / "side_by_side.png"), full_page=True)

        page.goto(url + "/session/reflection/user-000/2")
        page.click("text=memory over time")
        page.wait_for_url("**/memory/reflection/user-000")
        added = page.locator("#version-1 ul.diff li.added")
        assert NOTE in added.inner_text()
        assert "led by enforcements" in page.locator("#version-1 .because").inner_text()
        page.screenshot(path=str(shots / "memory.png"), full_page=True)

        page.goto(url + "/curves")
        page.locator("svg a.point").last.click()  # drawn last, on top
        page.wait_for_url("**/sessions?condition=*")
        page.screenshot(path=str(shots / "curves.png"), full_page=True)
    sizes = {p.name: p.stat().st_size for p in shots.iterdir()}
    assert set(sizes) == {
        "summary.png",
        "session.png",
        "side_by_side.png",
        "memory.png",
        "curves.png",
    }
    assert all(size > 10_000 for size in sizes.values())
