"""The agent's reply reaches the page piece by piece while it is generated, as ``delta``
events of plain text; the stored message is the whole reply, stored before the page is
told it arrived."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from rapport.llm import Completion, ModelAPI, ModelRoles, Request, ScriptedAPI, TextSink
from rapport.study import SessionKey, StudyCreated, StudyDB, start_study_server

from .helpers import Participant, memory_reply

pytestmark = pytest.mark.race

PIECES = ["Start ", "with <b>the</b> ", "loop:\n\n", "1. read it\n", "2. **fix** it"]


class Gated(ModelAPI):
    """Streams `PIECES`, each after the test has seen the one before on the page's stream
    (and ends once it has seen the last), so every piece is its own event whatever the
    machine's speed."""

    name = "gated/test"

    def __init__(self) -> None:
        self.seen = [threading.Event() for _ in PIECES]

    async def complete(self, request: Request) -> Completion:
        return Completion(text="".join(PIECES))

    async def stream(self, request: Request, on_text: TextSink) -> Completion:
        for i, piece in enumerate(PIECES):
            on_text(piece)
            await asyncio.to_thread(self.seen[i].wait, 30)
        return await self.complete(request)


def test_a_reply_streams_as_deltas_that_add_up_to_the_stored_message(
    study: StudyCreated,
) -> None:
    gated = Gated()
    roles = ModelRoles(
        {"agent": gated, "memory": ScriptedAPI(responder=memory_reply, name="scripted/memory")}
    )
    with start_study_server(study.study_dir, models=roles) as url:
        client = httpx.Client(base_url=url, timeout=60)
        p = Participant(client, f"/p/{study.tokens['p01']}")
        p.consent()
        sent = p.send(1, "where do I start?").json()["stored"]
        events: list[tuple[str, object]] = []
        with client.stream("GET", f"{p.path}/s/1/events?after={sent}") as stream:
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    body = json.loads(line[6:])
                    events.append((kind, body))
                    if kind == "delta":
                        gated.seen[sum(k == "delta" for k, _ in events) - 1].set()
    deltas = [b for k, b in events if k == "delta"]
    messages = [b for k, b in events if k == "message"]
    assert [d["text"] for d in deltas] == PIECES  # type: ignore[index]
    assert [d["offset"] for d in deltas] == [sum(map(len, PIECES[:i])) for i in range(5)]  # type: ignore[index]
    assert {d["seq"] for d in deltas} == {sent + 1}  # type: ignore[index]
    assert set(deltas[0]) == {"seq", "offset", "text"}  # plain text only, never HTML
    assert len(messages) == 1 and messages[0]["seq"] == sent + 1  # type: ignore[index]
    whole = "".join(PIECES)
    assert messages[0]["text"] == whole  # type: ignore[index]
    assert "<b>" not in messages[0]["html"]  # type: ignore[index,operator]
    assert [k for k, _ in events].index("message") > [k for k, _ in events].index("delta")
    db = StudyDB(study.study_dir)
    try:
        stored = db.messages(SessionKey("p01", "none", 0))
    finally:
        db.close()
    assert [(m.speaker, m.text) for m in stored] == [
        ("user", "where do I start?"),
        ("agent", whole),
    ]
