"""A participant works through every session of a study over HTTP; the sessions land in
the run store as a simulated run's do, the memory learns between them, and the report and
a second server (days later) read them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from rapport.cli import main
from rapport.envs.study import ClosingAnswers, ClosingEvent, study_outcome
from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent
from rapport.report import build_report
from rapport.store import RunStore
from rapport.study import StudyCreated, StudyDB, create_study, csrf_token, start_study_server
from rapport.view import memory_url, session_url, start_server

from .helpers import (
    DESIGN,
    NOTE,
    Participant,
    agent_reply,
    memory_reply,
    reflection_first,
    scripted_roles,
)

pytestmark = pytest.mark.race


def test_a_participant_works_through_every_session(study: StudyCreated, capsys) -> None:  # type: ignore[no-untyped-def]
    pid, token = reflection_first(study)
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        p = Participant(client, f"/p/{token}")
        assert "Before you start" in p.open().text
        assert p.consent().status_code == 303
        home = p.open().text
        assert "Your preference card" in home and "Sketch before code" in home
        for pos in range(1, 13):
            p.play(pos, [f"help with problem {pos}", "and the next step?"], rating=pos % 5 + 1,
                   feedback=f"note on {pos}")  # fmt: skip
        assert "The one in parts 1 and 3</label>" in client.get(f"/p/{token}/closing").text
        closing = client.post(
            f"/p/{token}/closing",
            data={"csrf": p.csrf, "preferred": "first", "learned": "4", "comments": "ok"},
        )
        assert closing.status_code == 303
        # In the run store before the page was told it was saved: on the last session,
        # which is not counted as played again.
        with RunStore.open_readonly(study.study_dir) as store:
            last = store.session("none", pid, 5)
            attempts = store.attempts(user_id=pid)
        assert last is not None
        assert len(attempts) == 12 and set(attempts.values()) == {1}
        assert [(e.preferred_condition(), e.learned) for e in last.events_of(ClosingEvent)] == [
            ("reflection", 4)
        ]
        assert "study is complete" in client.get(f"/p/{token}/closing").text
        researcher = client.get(f"/r/{study.researcher_token}/").text
        assert "12 / 12" in researcher and "preferred first" in researcher
    with RunStore.open_readonly(study.study_dir) as store:
        records = store.sessions(user_id=pid)
        memory = store.latest_memory("reflection", pid)
    assert len(records) == 12 and all(r.status == "ok" for r in records)
    assert {r.condition for r in records} == {"none", "reflection"}
    assert all(len(r.turns) == 4 and r.scores["length"] == 4 for r in records)
    assert memory is not None and [i.text for i in memory.state.items] == [NOTE]
    # The memory learned after each reflection block's first session, so the block's later
    # sessions recall it; a block starts with an empty memory (kept per study type).
    later = [r for r in records if r.condition == "reflection" and r.index % 3 > 0]
    assert len(later) == 4 and all(r.turns[1].text.startswith("1. ") for r in later)
    firsts = [r for r in records if r.condition == "reflection" and r.index % 3 == 0]
    assert len(firsts) == 2 and all(not r.turns[1].text.startswith("1. ") for r in firsts)
    assert all(not r.turns[1].text.startswith("1. ") for r in records if r.condition == "none")
    report = build_report(study.study_dir)
    assert report.benchmark == "study" and report.sessions == 12
    assert report.metrics == ["length", "adherence", "memory", "confidence", "satisfaction"]
    titles = [t.title for t in report.tables]
    assert any("free-text" in t for t in titles)
    free = next(t for t in report.tables if "free-text" in t.title)
    assert len(free.rows) == 12 and ["reflection", "mixed", 1, pid, "note on 7", "-"] in free.rows
    # Ratings were pos % 5 + 1: coding with reflection (parts' sessions 1-3) got 2, 3, 4,
    # without (4-6) 5, 1, 2; mixed with reflection (7-9) 3, 4, 5, without (10-12) 1, 2, 3.
    diff = next(t for t in report.tables if "memory - no memory" in t.title)
    adherence = diff.columns.index("adherence")
    assert [(r[1], r[2], r[3], r[adherence]) for r in diff.rows] == [
        ("coding", 1, 1, "-3.00 [-]"),
        ("coding", 2, 1, "2.00 [-]"),
        ("coding", 3, 1, "2.00 [-]"),
        ("mixed", 1, 1, "2.00 [-]"),
        ("mixed", 2, 1, "2.00 [-]"),
        ("mixed", 3, 1, "2.00 [-]"),
    ]
    survey = next(t for t in report.tables if "per session, median" in t.title)
    assert [r[:4] for r in survey.rows][:4] == [
        ["none", "coding", 1, 1],
        ["none", "coding", 2, 1],
        ["none", "coding", 3, 1],
        ["none", "mixed", 1, 1],
    ]
    learned = next(t for t in report.tables if "learned how I like" in t.title)
    assert learned.rows == [["reflection then none", 1, "4; 4.00 [-]"], ["all", 1, "4; 4.00 [-]"]]
    kept = next(t for t in report.tables if "would keep" in t.title)
    assert kept.columns == [
        "condition order",
        "participants",
        "reflection",
        "none",
        "no difference",
    ]
    assert kept.rows[-1] == ["all", 1, 1, 0, 0]
    comments = next(t for t in report.tables if t.title == "study closing: comments")
    assert comments.rows == [[pid, "reflection then none", "ok"]]
    assert main(["report", str(study.study_dir)]) == 0
    printed = capsys.readouterr().out
    assert "study: per session, median" in printed and "study closing: comments" in printed
    exported = study.study_dir.parent / "sessions.jsonl"
    assert main(["export", str(study.study_dir), "--format", "jsonl", "--out", str(exported)]) == 0
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(rows) == 12
    closing_rows = [e for r in rows for e in r["events"] if e["kind"] == "study_closing"]
    assert closing_rows == [
        {
            "kind": "study_closing",
            "turn": None,
            "order": ["reflection", "none"],
            "preferred": "first",
            "learned": 4,
            "comments": "ok",
        }
    ]
    with start_server(study.study_dir) as url:
        viewer = httpx.Client(base_url=url, timeout=30)
        assert "adherence" in viewer.get("/").text
        session = viewer.get(session_url("reflection", pid, 1))
        assert session.status_code == 200 and "help with problem 2" in session.text
        memory = viewer.get(memory_url("reflection", pid))
        assert memory.status_code == 200 and NOTE in memory.text
        assert viewer.get("/curves").status_code == 200


def test_a_participant_comes_back_to_a_new_server(study: StudyCreated) -> None:
    _pid, token = reflection_first(study)
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{token}")
        p.consent()
        p.play(1, ["first visit"])
        sent = p.send(2, "started, then left")
        assert sent.status_code == 200
        p.reply(2, sent.json()["stored"])
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{token}")
        page = p.open()
        assert "Session 1</a>" in page.text
        again = p.page(2).text
        assert "started, then left" in again and again.count("msg agent") == 1
        p.play(2, ["back a few days later"])
    with RunStore.open_readonly(study.study_dir) as store:
        record = store.session("reflection", _pid, 1)
    assert record is not None
    assert [t.text for t in record.turns if t.speaker == "user"] == [
        "started, then left",
        "back a few days later",
    ]


def test_a_reply_that_fails_once_is_tried_again_and_the_session_goes_on(
    study: StudyCreated,
) -> None:
    calls = {"n": 0}

    def flaky(request: Request) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ModelError("the agent's server dropped the connection")
        return "a reply"

    models = scripted_roles(flaky)
    with start_study_server(study.study_dir, models=models, retry_delays=[0.01]) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{study.tokens['p01']}")
        p.consent()
        p.play(1, ["one", "two"])
        p.play(2, ["the next session works"])
    with RunStore.open_readonly(study.study_dir) as store:
        first, second = store.session("none", "p01", 0), store.session("none", "p01", 1)
    assert first is not None and first.status == "ok"
    assert not first.events_of(ErrorEvent)
    assert [t.text for t in first.turns] == ["one", "a reply", "two", "a reply"]
    assert second is not None and second.status == "ok" and second.scores["adherence"] == 4


def test_the_next_session_waits_while_the_memory_learns(study: StudyCreated) -> None:
    pid, token = reflection_first(study)
    release = threading.Event()

    async def slow_memory(request: Request) -> str:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return memory_reply(request)

    models = ModelRoles(
        {
            "agent": ScriptedAPI(responder=agent_reply, name="scripted/agent"),
            "memory": ScriptedAPI(responder=slow_memory, name="scripted/memory"),
        }
    )
    with start_study_server(study.study_dir, models=models) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{token}")
        p.consent()
        sent = p.send(1, "a question")
        p.reply(1, sent.json()["stored"])
        p.end(1)
        assert p.survey(1).status_code == 303
        home = p.open().text
        assert "Saving your last session" in home and 'http-equiv="refresh"' in home
        assert p.client.get(f"/p/{token}/s/2").status_code == 409
        release.set()
        for _ in range(500):
            if "Saving your last session" not in p.open().text:
                break
            time.sleep(0.02)
        assert p.page(2).status_code == 200
    with RunStore.open_readonly(study.study_dir) as store:
        memory = store.latest_memory("reflection", pid)
    assert memory is not None and [i.text for i in memory.state.items] == [NOTE]


def test_closing_answers_a_killed_server_had_not_stored_reach_the_run_store(
    study: StudyCreated,
) -> None:
    pid, token = reflection_first(study)
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(httpx.Client(base_url=url, timeout=30), f"/p/{token}")
        p.consent()
        for pos in range(1, 13):
            p.play(pos, [f"problem {pos}"])
    # The server stored the answers in study.sqlite and died before the run store.
    db = StudyDB(study.study_dir)
    try:
        db.close_study(pid, ClosingAnswers(preferred="second", learned=2, comments="later"))
        csrf = csrf_token(db.secret(), pid)
    finally:
        db.close()
    with RunStore.open_readonly(study.study_dir) as store:
        assert not store.session("none", pid, 5).events_of(ClosingEvent)  # type: ignore[union-attr]
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        again = httpx.post(
            f"{url}/p/{token}/closing",
            data={"csrf": csrf, "preferred": "first", "learned": "5", "comments": "changed"},
        )
        assert again.status_code == 303
    with RunStore.open_readonly(study.study_dir) as store:
        last = store.session("none", pid, 5)
        others = [r for r in store.sessions(user_id=pid) if r.index != 5 or r.condition != "none"]
        attempts = store.attempts(user_id=pid)
    assert last is not None and last.status == "ok" and len(last.turns) == 2
    events = last.events_of(ClosingEvent)
    assert [(e.preferred_condition(), e.learned, e.comments) for e in events] == [
        ("none", 2, "later")  # the first answers stay
    ]
    assert not any(r.events_of(ClosingEvent) for r in others)
    assert set(attempts.values()) == {1}


def test_a_one_type_study_keeps_one_memory_across_its_block(tmp_path: Path) -> None:
    data = yaml.safe_load(DESIGN.read_text())
    data["blocks"] = "one_type"
    for t in data["study_types"]:
        t["problem_sets"].append([p.replace("-1", "-2") for p in t["problem_sets"][0]])
    design = tmp_path / "one-type.yaml"
    design.write_text(yaml.safe_dump(data))
    made = create_study(design, 2, tmp_path / "study")
    with start_study_server(made.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        p = Participant(client, f"/p/{made.tokens['p02']}")  # mixed, none first
        p.consent()
        assert p.client.get(f"{p.path}/s/7").status_code == 404
        for pos in range(1, 7):
            p.play(pos, [f"problem {pos}"])
        closing = client.post(
            f"{p.path}/closing",
            data={"csrf": p.csrf, "preferred": "second", "learned": "3", "comments": ""},
        )
        assert closing.status_code == 303
    with RunStore.open_readonly(made.study_dir) as store:
        records = store.sessions(user_id="p02")
        attempts = store.attempts(user_id="p02")
    assert [(r.condition, r.index) for r in records] == [
        (c, i) for c in ("none", "reflection") for i in range(3)
    ]
    outcomes = [study_outcome(r) for r in records]
    assert {o.study_type for o in outcomes if o is not None} == {"mixed"}
    assert [o.problem_id for o in outcomes if o is not None] == [
        "mixed-writing-1", "mixed-maths-1", "mixed-code-1",
        "mixed-writing-2", "mixed-maths-2", "mixed-code-2",
    ]  # fmt: skip
    reflection = [r for r in records if r.condition == "reflection"]
    assert [r.turns[1].text.startswith("1. ") for r in reflection] == [False, True, True]
    last = records[-1]
    assert [e.preferred_condition() for e in last.events_of(ClosingEvent)] == ["reflection"]
    assert set(attempts.values()) == {1}
