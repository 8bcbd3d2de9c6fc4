"""The viewer's pages over HTTP (Starlette's test client): content, links, pagination."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rapport.cli import build_parser, main
from rapport.envs.collab import EnforcementEvent
from rapport.log import RecallEvent
from rapport.report import build_report, render_html
from rapport.store import RunStore
from rapport.view import RunData, create_app, memory_url, session_url

from .conftest import NOTE


@pytest.fixture(scope="module")
def client(scripted_run: Path) -> TestClient:
    return TestClient(create_app(scripted_run))


def _recalled(run_dir: Path) -> tuple[str, str, int]:
    with RunStore.open_readonly(run_dir) as store:
        for r in store.sessions(condition="reflection"):
            if r.events_of(RecallEvent) and r.events_of(EnforcementEvent):
                return r.condition, r.user_id, r.index
    raise AssertionError("the scripted run has no session with a recall and an enforcement")


def test_summary_lists_conditions_with_cis_users_and_the_run(client: TestClient) -> None:
    page = client.get("/").text
    assert "none" in page and "reflection" in page and "[95% CI]" in page
    assert "user-000" in page and memory_url("reflection", "user-001") in page
    assert "scripted/agent" in page and "retrieval" in page  # the run describes itself


def test_the_summary_names_the_preset_and_what_differs_from_the_paper(
    client: TestClient,
) -> None:
    page = client.get("/").text
    assert "<th>preset</th><td>small</td>" in page
    differs = page[page.index("<th>differs from the paper</th>") :].split("</tr>")[0]
    assert "session=guarded" in differs
    assert "\\u0027" not in page and "&#34;" not in page  # no JSON in the run's rows


def test_the_light_summary_counts_errors_like_the_full_report(scripted_run: Path) -> None:
    from rapport.report import build_report

    light = RunData(scripted_run).summary()
    full = build_report(scripted_run)
    assert light.errors_by_condition == full.errors_by_condition == {"reflection": 1}
    assert light.conditions == full.conditions and light.curves == full.curves


def test_session_shows_recall_and_enforcement_at_their_turns(
    client: TestClient, scripted_run: Path
) -> None:
    condition, user, index = _recalled(scripted_run)
    page = client.get(session_url(condition, user, index)).text
    recall_turn = page.index('id="turn-1"')
    assert page.index("recalled memory", recall_turn) < page.index('id="turn-2"')
    assert NOTE in page[recall_turn : page.index('id="turn-2"')]
    enforcement = page.index("the user enforced", page.index('id="turn-2"'))
    assert enforcement < page.index('id="turn-3"')
    assert "Token usage" in page and "agent" in page and "UE" in page
    events = page[page.index("Session events") :]
    assert "memory in the system prompt" in events and NOTE in events
    assert "kind=" not in page, "no event is shown as a Python repr"


def test_an_error_shows_inline_at_its_turn(client: TestClient) -> None:
    errors = client.get("/errors").text
    assert "the agent" in errors and "dropped the connection" in errors
    page = client.get(session_url("reflection", "user-001", 0)).text
    turn = page.index('id="turn-5"')
    assert "error in agent" in page[turn:] and "has-error" in page[page.rindex("<div", 0, turn) :]


def test_side_by_side_aligns_turns_of_one_problem(client: TestClient, scripted_run: Path) -> None:
    with RunStore.open_readonly(scripted_run) as store:
        spec = store.session("none", "user-000", 1)
    assert spec is not None
    page = client.get(f"/compare/user-000/{spec.spec_id}?a=none&b=reflection").text
    assert page.count('id="turn-1"') == 2  # turn 1 under both conditions, on one row
    assert "recalled memory" in page and "none · session 2" in page


def test_memory_page_has_versions_diffs_and_preferences(client: TestClient) -> None:
    page = client.get(memory_url("reflection", "user-000")).text
    assert "version 1" in page and "added" in page and NOTE in page
    assert "led by enforcements" in page
    assert "Preferences the simulated user held" in page and "enforced" in page
    none = client.get(memory_url("none", "user-000")).text
    assert "no change from version 0" in none


def test_curves_link_points_to_their_sessions(client: TestClient) -> None:
    page = client.get("/curves").text
    assert "<svg" in page and "/sessions?condition=reflection&amp;session=2" in page
    listed = client.get("/sessions?condition=reflection&session=2").text
    assert listed.count("session 2</a>") == 2  # both users' second sessions


_LEGEND = re.compile(r'<span style="color: (#[0-9a-f]{6})">&#9632;</span> ([\w-]+)')


def test_a_condition_has_one_colour_in_every_chart_of_report_and_viewer(
    client: TestClient, scripted_run: Path
) -> None:
    colours: dict[str, set[str]] = {}
    for page in (client.get("/curves").text, render_html(build_report(scripted_run))):
        legends = _LEGEND.findall(page)
        assert {name for _, name in legends} == {"none", "reflection"}
        assert len(legends) > 2  # absolute and difference charts
        for colour, name in legends:
            colours.setdefault(name, set()).add(colour)
    assert all(len(c) == 1 for c in colours.values()), colours
    assert colours["none"] != colours["reflection"]


def test_a_session_has_one_number_in_title_url_list_export_and_report(
    client: TestClient, scripted_run: Path, tmp_path: Path
) -> None:
    with RunStore.open_readonly(scripted_run) as store:
        failed = next(r for r in store.sessions() if r.status == "error")
    number = failed.index + 1  # stored indices count from 0; people count from 1
    url = session_url(failed.condition, failed.user_id, failed.index)
    assert url.endswith(f"/{number}")
    page = client.get(url).text
    assert f"{failed.user_id} · session {number}</h1>" in page
    listed = client.get(f"/sessions?user={failed.user_id}&session={number}").text
    assert f'href="{url}"' in listed and f"session {number}</a>" in listed
    out = tmp_path / "s.jsonl"
    assert main(["export", str(scripted_run), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    exported = [r["session"] for r in rows if r["status"] == "error"]
    errors = [e.session for e in build_report(scripted_run).error_list]
    assert exported == [number] and errors and set(errors) == {number}
    assert client.get(session_url(failed.condition, failed.user_id, -1)).status_code == 404


def test_sessions_are_paginated(scripted_run: Path) -> None:
    client = TestClient(create_app(scripted_run, data=RunData(scripted_run, page_size=5)))
    first = client.get("/sessions").text
    assert "page 1 of 3 (12)" in first and 'rel="next"' in first
    assert first.count("<tr class=") == 5
    third = client.get("/sessions?page=3").text
    assert third.count("<tr class=") == 2 and 'rel="next"' not in third


def test_unknown_pages_are_404_with_one_line(client: TestClient) -> None:
    response = client.get(session_url("reflection", "nobody", 0))
    assert response.status_code == 404 and "no session" in response.text
    assert client.get("/sessions?session=x").status_code == 400


def test_view_of_a_missing_run_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["view", str(tmp_path / "nothing")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "nothing").exists()
    assert build_parser().parse_args(["view", "x", "--port", "9"]).port == 9


@pytest.mark.race
def test_the_command_serves_on_loopback_and_stops_on_ctrl_c(scripted_run: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "rapport", "view", str(scripted_run), "--port", "0"]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        while "http://" not in line:
            line = proc.stderr.readline()
            assert line, "the viewer exited before serving"
        url = line.split()[2]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and "reflection" in response.read().decode()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
