"""A participant and a researcher driving the study app over HTTP, as a browser would
without its script (forms, redirects) plus the page's event stream."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx

from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.study import StudyCreated, StudyDB

DESIGN = Path(__file__).parents[2] / "docs" / "study-design.yaml"
NOTE = "Answer in numbered steps, one step at a time"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def reflection_first(study: StudyCreated) -> tuple[str, str]:
    """A participant who meets reflection first (and the coding study first): parts are
    coding with reflection, coding with none, mixed with reflection, mixed with none."""
    db = StudyDB(study.study_dir)
    try:
        who = next(
            a
            for a in db.assignments()
            if a.order[0] == "reflection" and a.study_types[0] == "coding"
        )
    finally:
        db.close()
    return who.participant, study.tokens[who.participant]


def states(events: list[tuple[str, object]]) -> list[object]:
    """The states an event stream said, in order."""
    return [body for kind, body in events if kind == "state"]


def memory_reply(request: Request) -> str:
    """Reflection keeps one note (as the study's notes document, or a list); recall
    selects it."""
    title = str((request.json_schema or {}).get("title", ""))
    if title == "NoteSelection":
        return json.dumps({"notes": [1]})
    if title == "NotesUpdate":
        return json.dumps({"reasoning": "They asked for numbered steps.", "notes": NOTE})
    return json.dumps({"reasoning": "They asked for numbered steps.", "notes": [NOTE]})


def agent_reply(request: Request) -> str:
    """Numbered steps once memory holds the note; prose before."""
    if any(NOTE in m.content for m in request.messages):
        return "1. Read the loop.\n2. Divide by `i + 1`."
    last = request.messages[-1].content if request.messages else ""
    return f"Here is a thought on: {last[:60]}"


def scripted_roles(agent: object = agent_reply, stream_delay: float = 0.0) -> ModelRoles:
    """Agent and memory roles answering as above (the agent's replies streamed a word at a
    time, `stream_delay` seconds apart)."""
    return ModelRoles(
        {
            "agent": ScriptedAPI(
                responder=agent,  # type: ignore[arg-type]
                name="scripted/agent",
                stream_delay=stream_delay,
            ),
            "memory": ScriptedAPI(responder=memory_reply, name="scripted/memory"),
        }
    )


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found, "no CSRF field on the page"
    return found.group(1)


class Participant:
    """One invited participant."""

    def __init__(self, client: httpx.Client, path: str) -> None:
        self.client, self.path = client, path
        self.csrf = ""

    def open(self) -> httpx.Response:
        page = self.client.get(self.path)
        if page.status_code == 200 and 'name="csrf"' in page.text:
            self.csrf = csrf_of(page.text)
        return page

    def page(self, pos: int) -> httpx.Response:
        """A session's page (its forms' CSRF token is kept)."""
        page = self.client.get(f"{self.path}/s/{pos}")
        if page.status_code == 200 and 'name="csrf"' in page.text:
            self.csrf = csrf_of(page.text)
        return page

    def consent(self) -> httpx.Response:
        self.open()
        return self.client.post(f"{self.path}/consent", data={"csrf": self.csrf, "agree": "yes"})

    def send(self, pos: int, text: str) -> httpx.Response:
        return self.client.post(
            f"{self.path}/s/{pos}/message",
            data={"csrf": self.csrf, "text": text},
            headers={"accept": "application/json"},
        )

    def events(self, pos: int, after: int) -> list[tuple[str, object]]:
        """The session's event stream from ``after`` until it closes."""
        out: list[tuple[str, object]] = []
        with self.client.stream("GET", f"{self.path}/s/{pos}/events?after={after}") as r:
            kind = ""
            for line in r.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    out.append((kind, json.loads(line[6:])))
        return out

    def reply(self, pos: int, after: int) -> dict[str, object]:
        """The agent's reply after message ``after`` (waits on the event stream)."""
        for _ in range(50):
            for kind, body in self.events(pos, after):
                if kind == "message" and isinstance(body, dict) and body["speaker"] == "agent":
                    return body
        raise AssertionError("no reply came")

    def end(self, pos: int) -> httpx.Response:
        return self.client.post(f"{self.path}/s/{pos}/end", data={"csrf": self.csrf})

    def survey(self, pos: int, rating: int = 4, feedback: str = "") -> httpx.Response:
        data = {i: str(rating) for i in ("adherence", "memory", "confidence", "satisfaction")}
        data["impact"] = "followed_helped"
        return self.client.post(
            f"{self.path}/s/{pos}/survey", data={"csrf": self.csrf, **data, "feedback": feedback}
        )

    def wait_saved(self, pos: int, tries: int = 400) -> None:
        """Until the session is in the run store (its page says complete)."""
        for _ in range(tries):
            text = self.client.get(f"{self.path}/s/{pos}").text
            if "This session is complete" in text or "stopped on an error" in text:
                return
            time.sleep(0.02)
        raise AssertionError(f"session {pos} was never saved")

    def play(self, pos: int, messages: list[str], rating: int = 4, feedback: str = "") -> None:
        """A whole session: messages, each answered, then the end and the survey."""
        for text in messages:
            sent = self.send(pos, text)
            assert sent.status_code == 200, sent.text
            self.reply(pos, sent.json()["stored"])
        assert self.end(pos).status_code == 303
        assert self.survey(pos, rating, feedback).status_code == 303
        self.wait_saved(pos)
