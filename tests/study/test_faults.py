"""What a week with real participants would hit, over HTTP: an error that must reach the
page, a restart in the middle of a reply, a model outage, a session at its message cap,
text that is not text, and invites that must stop working."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

from rapport.llm import ModelError, ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent
from rapport.store import RunStore
from rapport.study import MAX_MESSAGES, SessionKey, StudyCreated, StudyDB, start_study_server

from .helpers import (
    Participant,
    agent_reply,
    memory_reply,
    reflection_first,
    scripted_roles,
    states,
)

pytestmark = pytest.mark.attack


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=30)


def test_an_error_that_ends_a_session_reaches_its_event_stream(
    picking_study: StudyCreated,
) -> None:
    study = picking_study
    """The memory fails while the participant waits for a reply: the stream they follow
    says ``error`` (it used to say ``done``, and the page waited for ever)."""
    pid, token = reflection_first(study)
    broken = threading.Event()

    def memory(request: Request) -> str:
        if broken.is_set():
            raise ModelError("the memory's server is gone")
        return memory_reply(request)

    models = ModelRoles(
        {
            "agent": ScriptedAPI(responder=agent_reply, name="scripted/agent"),
            "memory": ScriptedAPI(responder=memory, name="scripted/memory"),
        }
    )
    with start_study_server(study.study_dir, models=models) as url:
        p = Participant(_client(url), f"/p/{token}")
        p.consent()
        p.play(1, ["help me start"])
        broken.set()
        sent = p.send(2, "and now?").json()["stored"]
        said = p.events(2, sent)
        assert states(said)[-1] == "error"
        assert "stopped on an error" in p.page(2).text
    with RunStore.open_readonly(study.study_dir) as store:
        record = store.session("reflection", pid, 1)
    assert record is not None and record.status == "error"


def _pending(release: threading.Event) -> ModelRoles:
    """An agent whose reply waits until ``release`` is set."""

    async def slow(request: Request) -> str:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "late"

    return scripted_roles(slow)  # type: ignore[arg-type]


def test_a_reconnect_after_a_restart_gets_the_pending_reply(study: StudyCreated) -> None:
    """The server stops while a reply is being generated; the page's event stream, opened
    again on the new server (as EventSource does by itself), gets the reply."""
    release = threading.Event()
    token = study.tokens["p01"]
    with start_study_server(study.study_dir, models=_pending(release)) as url:
        p = Participant(_client(url), f"/p/{token}")
        p.consent()
        sent = p.send(1, "a question before the restart").json()["stored"]
    release.set()
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(_client(url), f"/p/{token}")
        said = p.events(1, sent)  # the stream, not the page, is what comes back first
    replies = [b for k, b in said if k == "message" and b["speaker"] == "agent"]  # type: ignore[index]
    assert len(replies) == 1 and replies[0]["seq"] == sent + 1  # type: ignore[index]
    assert states(said)[-1] == "listening"


def _outage(failing: threading.Event) -> ModelRoles:
    def agent(request: Request) -> str:
        if failing.is_set():
            raise ModelError("connection refused")
        return agent_reply(request)

    return scripted_roles(agent)


def test_a_short_outage_costs_a_wait_not_the_session(study: StudyCreated) -> None:
    calls = {"n": 0}

    def agent(request: Request) -> str:
        calls["n"] += 1
        if calls["n"] <= 3:  # three tries fail, the fourth answers
            raise ModelError("connection refused")
        return agent_reply(request)

    delays = [0.01, 0.02, 0.04, 0.08]
    with start_study_server(
        study.study_dir, models=scripted_roles(agent), retry_delays=delays
    ) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        p.play(1, ["does this still work?"])
    with RunStore.open_readonly(study.study_dir) as store:
        record = store.session("none", "p01", 0)
    assert record is not None and record.status == "ok" and not record.events_of(ErrorEvent)
    assert calls["n"] == 4


def test_a_reply_that_keeps_failing_waits_for_the_participant(study: StudyCreated) -> None:
    failing = threading.Event()
    failing.set()
    with start_study_server(study.study_dir, models=_outage(failing), retry_delays=[0.01]) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        sent = p.send(1, "are you there?").json()["stored"]
        said = p.events(1, sent)
        assert states(said)[-1] == "failed"
        assert ("problem", "agent: connection refused") in said or any(
            k == "problem" and "connection refused" in str(b) for k, b in said
        )
        page = p.page(1).text
        assert "could not reply" in page and "Try the reply again" in page
        failing.clear()
        again = p.client.post(
            f"{p.path}/s/1/retry", data={"csrf": p.csrf}, headers={"accept": "application/json"}
        )
        assert again.status_code == 200, again.text
        assert p.reply(1, sent)["seq"] == sent + 1
        assert p.client.post(f"{p.path}/s/1/retry", data={"csrf": p.csrf}).status_code == 409
        p.play(1, ["thanks"])
    with RunStore.open_readonly(study.study_dir) as store:
        record = store.session("none", "p01", 0)
    assert record is not None and record.status == "ok"


def test_a_session_ended_on_a_failed_reply_keeps_its_survey(study: StudyCreated) -> None:
    failing = threading.Event()
    failing.set()
    with start_study_server(study.study_dir, models=_outage(failing), retry_delays=[0.01]) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        sent = p.send(1, "hello?").json()["stored"]
        assert states(p.events(1, sent))[-1] == "failed"
        assert p.end(1).status_code == 303
        assert p.survey(1, rating=2, feedback="it never answered").status_code == 303
        p.wait_saved(1)
        failing.clear()
        p.play(2, ["the next one works"])
    db = StudyDB(study.study_dir)
    try:
        survey = db.survey(SessionKey("p01", "none", 0))
    finally:
        db.close()
    assert survey is not None and survey.feedback == "it never answered"
    with RunStore.open_readonly(study.study_dir) as store:
        failed, fine = store.session("none", "p01", 0), store.session("none", "p01", 1)
    assert failed is not None and failed.status == "error"
    assert [e.where for e in failed.events_of(ErrorEvent)] == ["agent"]
    assert "participant ended" in failed.events_of(ErrorEvent)[0].message
    assert fine is not None and fine.status == "ok"


def test_the_message_past_the_cap_is_refused_with_a_reason(study: StudyCreated) -> None:
    key = SessionKey("p01", "none", 0)
    db = StudyDB(study.study_dir)
    try:
        long = [
            ("user" if i % 2 == 0 else "agent", f"message {i}") for i in range(2 * MAX_MESSAGES)
        ]
        db.add_messages(key, long)  # type: ignore[arg-type]
    finally:
        db.close()
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        assert p.page(1).status_code == 200
        refused = p.send(1, "one more")
        assert refused.status_code == 409
        assert f"limit of {MAX_MESSAGES} messages" in refused.json()["error"]
        p.end(1)
        assert p.survey(1).status_code == 303
        p.wait_saved(1)
    with RunStore.open_readonly(study.study_dir) as store:
        record = store.session("none", "p01", 0)
    assert record is not None and record.status == "ok"
    assert len(record.turns) == 2 * MAX_MESSAGES


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("text=caf%E9", "not UTF-8"),  # Latin-1 é, percent-encoded
        ("text=a%00b", "U+0000"),
        ("text=%1B%5D0%3Bpwned%07", "U+001B"),
    ],
)
def test_text_that_is_not_text_is_refused(study: StudyCreated, body: str, why: str) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        sent = p.client.post(
            f"{p.path}/s/1/message",
            content=f"csrf={p.csrf}&{body}",
            headers={
                "content-type": "application/x-www-form-urlencoded",
                "accept": "application/json",
            },
        )
        assert sent.status_code == 400 and why in sent.json()["error"]
        kept = p.send(1, "line one\r\nline two")
        assert kept.status_code == 200
    db = StudyDB(study.study_dir)
    try:
        texts = [m.text for m in db.messages(SessionKey("p01", "none", 0))]
    finally:
        db.close()
    assert texts[0] == "line one\nline two"


def test_revoked_and_expired_invites_stop_working(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = _client(url)
        assert client.get(f"/p/{study.tokens['p01']}").status_code == 200
        db = StudyDB(study.study_dir)
        try:
            assert db.revoke(["p01", "nobody"]) == ["nobody"]  # nothing revoked yet
            assert client.get(f"/p/{study.tokens['p01']}").status_code == 200
            assert db.revoke(["p01"]) == []
            assert client.get(f"/p/{study.tokens['p01']}").status_code == 404
            assert client.get(f"/p/{study.tokens['p02']}").status_code == 200
            db.expire(time.time() - 1)
            assert client.get(f"/p/{study.tokens['p02']}").status_code == 404
            db.expire(None)
            assert client.get(f"/p/{study.tokens['p02']}").status_code == 200
        finally:
            db.close()


def test_the_event_stream_of_a_long_session_sends_each_message_once(
    study: StudyCreated,
) -> None:
    key = SessionKey("p01", "none", 0)
    db = StudyDB(study.study_dir)
    try:
        db.add_messages(key, [("user" if i % 2 == 0 else "agent", f"**m{i}**") for i in range(400)])  # type: ignore[misc]
    finally:
        db.close()
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = Participant(_client(url), f"/p/{study.tokens['p01']}")
        p.consent()
        said = p.events(1, -1)
        tail = p.events(1, 397)
    seqs = [b["seq"] for k, b in said if k == "message"]  # type: ignore[index]
    assert seqs == list(range(400))
    assert [json.dumps(b) for k, b in said if k == "message"][1].count("<strong>m1</strong>") == 1
    assert [b["seq"] for k, b in tail if k == "message"] == [398, 399]  # type: ignore[index]
