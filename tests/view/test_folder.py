"""``rapport view`` on a folder of runs: the list of runs, their comparison, and each run's
own pages under ``/run/NAME/`` with every link kept under that root."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rapport.eval import run
from rapport.log import ExperimentConfig
from rapport.view import start_server

from .browser import browser_page
from .conftest import scripted_roles

pytestmark = pytest.mark.race


def collab_run(run_dir: Path, *, seed: int, users: int = 2) -> Path:
    """collab none vs reflection on the scripted roles."""
    config = ExperimentConfig(
        benchmark="collab",
        memory=["none", "reflection"],
        users=users,
        sessions=2,
        max_turns=3,
        seed=seed,
        run_dir=run_dir,
        options={"problems": "generated"},
        cache=False,
        preset="small",  # the scripted user answers the guarded user's prompt
    )
    run(config, models=scripted_roles(), progress=False)
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs; ``first`` and ``second`` share users and problems."""
    root = tmp_path_factory.mktemp("folder")
    collab_run(root / "first", seed=1)
    collab_run(root / "second", seed=1, users=3)
    collab_run(root / "third", seed=2)
    (root / "notes").mkdir()  # not a run: left out
    return root


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_list_shows_each_run_with_a_link(runs: Path) -> None:
    with start_server(runs) as url:
        status, page = _get(url + "/")
    assert status == 200
    assert re.findall(r'href="(/run/[^"]+)"', page) == [
        "/run/first/",
        "/run/second/",
        "/run/third/",
    ]
    assert page.count("scripted/agent") == 3 and page.count("complete") == 3
    assert "notes" not in page


def test_a_run_opens_as_alone_with_its_links_under_its_root(runs: Path) -> None:
    with start_server(runs) as url:
        status, page = _get(url + "/run/second/")
        links = set(re.findall(r'href="([^"#]+)', page))
        assert status == 200 and "second" not in links
        inside = {link for link in links if link.startswith("/run/second/")}
        assert "/run/second/sessions" in inside and "/run/second/curves" in inside
        assert links - inside == {"/"}  # the list of runs
        for link in sorted(inside):
            assert _get(url + link.replace("&amp;", "&"))[0] == 200, link
        status, sessions = _get(url + "/run/second/sessions?condition=reflection")
        session = re.findall(r'href="(/run/second/session/[^"]+)"', sessions)[0]
        assert _get(url + session)[0] == 200
        assert _get(url + "/run/nothing/")[0] == 404


def test_the_comparison_pairs_the_runs_that_share_users(runs: Path) -> None:
    with start_server(runs) as url:
        status, page = _get(url + "/compare")
        assert status == 200
        assert "second - first" in page
        assert "<td>third - first</td>" not in page and "<td>third - second</td>" not in page
        assert "Not paired: third - first: different seeds (1 and 2)" in page
        chosen = _get(url + "/compare?run=first&run=third")[1]
        assert "first" in chosen and "second" not in chosen
        assert _get(url + "/compare?run=nothing")[0] == 404


def test_folder_list_and_comparison_in_a_browser(runs: Path, tmp_path: Path) -> None:
    with start_server(runs) as url, browser_page() as page:
        page.goto(url + "/")
        assert page.locator("table.runs tr").count() == 4
        page.screenshot(path=str(tmp_path / "folder.png"), full_page=True)
        page.uncheck("input[value=third]")
        page.click("text=compare the runs ticked")
        assert "run=first" in page.url and "run=third" not in page.url
        assert page.locator("text=second - first").count() == 2  # one row per condition
        page.click("a.button:has-text('second')")
        assert page.url.endswith("/run/second/")
        page.click("nav >> text=sessions")
        assert page.url.endswith("/run/second/sessions")
        page.click("nav >> text=all runs")
        assert page.url == url + "/"


def test_side_by_side_gives_the_turn_column_little_width(runs: Path) -> None:
    # The empty header cell above the turn numbers once took a third of the page.
    with start_server(runs / "first") as url, browser_page() as page:
        page.goto(url + "/sessions?condition=reflection")
        page.locator("a:has-text('session 1')").first.click()
        page.click("text=side by side with none")
        widths = page.evaluate(
            "[...document.querySelectorAll('table.compare tr:first-child th')]"
            ".map(th => th.getBoundingClientRect().width)"
        )
        table = page.evaluate(
            "document.querySelector('table.compare').getBoundingClientRect().width"
        )
    assert len(widths) == 3
    assert widths[0] < 0.1 * table
    assert widths[1] == pytest.approx(widths[2], rel=0.05)
