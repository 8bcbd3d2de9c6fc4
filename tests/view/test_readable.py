"""The viewer's pages read as prose: turns counted from 1 like sessions, verdict chips with a
legend and amber where the user then enforced, stop and user-guard events in words, one
recalled block shown once, one number format per column, and a headline per run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rapport.log import RecallEvent, StopEvent, StopReason, UserGuardEvent
from rapport.store import RunStore
from rapport.view import create_app
from rapport.view._app import _environment, session_url
from rapport.view._folder import RunFolder, create_folder_app
from rapport.view._words import column_decimals

from .conftest import make_run


@pytest.fixture(scope="module")
def client(scripted_run: Path) -> TestClient:
    return TestClient(create_app(scripted_run))


def _session_with_recalls(run_dir: Path) -> tuple[str, str, int, int]:
    """A reflection session with more than one recall, and how many it has."""
    with RunStore.open_readonly(run_dir) as store:
        for r in store.sessions(condition="reflection"):
            recalls = r.events_of(RecallEvent)
            if len(recalls) > 1 and len({e.text for e in recalls}) == 1:
                return r.condition, r.user_id, r.index, len(recalls)
    pytest.skip("no session with a repeated recall")
    raise AssertionError


def test_turns_count_from_one(client: TestClient) -> None:
    page = client.get(session_url("none", "user-000", 0)).text
    numbers = [int(n) for n in re.findall(r'<div class="who">turn (\d+) ', page)]
    assert numbers[0] == 1 and numbers == sorted(numbers)


def test_a_repeated_recall_is_shown_once(client: TestClient, scripted_run: Path) -> None:
    condition, user, index, recalls = _session_with_recalls(scripted_run)
    page = client.get(session_url(condition, user, index)).text
    assert page.count("the same as at <a") == recalls - 1
    assert page.count("recalled memory</span><pre>") == 1


def test_chips_have_a_legend_and_are_amber_where_the_user_enforced(
    client: TestClient, scripted_run: Path
) -> None:
    with RunStore.open_readonly(scripted_run) as store:
        record = next(
            r
            for r in store.sessions(condition="none")
            if any(e.kind == "enforcement" for e in r.events)
        )
    page = client.get(session_url(record.condition, record.user_id, record.index)).text
    assert '<p class="legend">' in page
    enforced = {e.preference_id for e in record.events if e.kind == "enforcement"}
    chips = re.findall(r'<span class="verdict (\w+)"[^>]*>([a-z_]+) ', page)
    assert chips and all(kind == "enforced" for kind, p in chips if p in enforced)


def test_stop_and_user_guard_events_are_words() -> None:
    macros = _environment().get_template("macros.html").module
    stop = str(macros.event(StopEvent(turn=3, reason=StopReason.TURN_CAP, detail="10 turns")))
    guard = str(macros.event(UserGuardEvent(turn=2, reason="a role slip; code wrote the turn")))
    assert "conversation ended" in stop and "turn cap" in stop and "10 turns" in stop
    assert "user turn written by code" in guard and "a role slip" in guard
    assert "{" not in stop + guard  # no JSON


def test_one_number_format_per_column() -> None:
    assert column_decimals([2.0, 12.0]) == 1
    assert column_decimals([0.25, 1.0]) == 3
    assert column_decimals([None, 150.0]) == 0


def test_the_sessions_list_writes_a_column_alike(client: TestClient) -> None:
    page = client.get("/sessions?condition=none").text
    rows = re.findall(r"<tr class=\"(?:ok|error)\">(.*?)</tr>", page, re.DOTALL)
    columns = list(
        zip(*(re.findall(r'<td class="num">([^<]*)</td>', r) for r in rows), strict=True)
    )
    for column in columns:
        decimals = {len(v.split(".")[1]) if "." in v else 0 for v in column if v != "-"}
        assert len(decimals) <= 1, column


def test_one_memory_item_is_not_all_1_items(client: TestClient) -> None:
    page = client.get("/memory/reflection/user-000").text
    assert "all 1 items" not in page and "the one item" in page


def test_the_run_list_shows_a_headline_per_run(tmp_path: Path) -> None:
    make_run(tmp_path / "first", users=1, sessions=2, fail_at=None)
    folder = RunFolder(tmp_path)
    try:
        page = TestClient(create_folder_app(folder)).get("/").text
    finally:
        folder.close()
    assert "headline (mean over users)" in page
    assert re.search(r"<td>TS: none \d\.\d{3}, reflection \d\.\d{3}</td>", page), page
