"""The study's web app (Starlette + Jinja2): a participant's invite, consent, preference
card, sessions and surveys, the closing questionnaire; the researcher's pages.

A participant is known only by the unguessable token in their invite link and reaches only
their own sessions; researcher pages need the researcher's token. Every POST carries a CSRF
token, and every message and answer is committed before the page is told it was received.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from rapport.envs.study import (
    FREE_TEXT,
    ITEM_IDS,
    SESSIONS,
    Assignment,
    ClosingAnswers,
    SurveyAnswers,
    preference_card,
)
from rapport.eval import MAX_AGENT_CALLS, one_line
from rapport.log import UserRecord

from ._chat import ChatPages
from ._db import SessionKey, StoredMessage, TurnOrderError
from ._guard import Guard, csrf_token, form
from ._live import LiveSession, State, StudyRuntime
from ._pages import page
from ._render import render_markdown
from ._researcher import researcher_routes

EVENT_WINDOW_S = 300.0
"""How long one event stream stays open (the page's EventSource reconnects)."""

MAX_MESSAGES = MAX_AGENT_CALLS
"""The most messages a participant writes in one session (each gets one reply; the runner
ends a session after that many agent calls). The next one is refused with a message saying
so, and the participant ends the session."""

RENDER_ON_LOOP = 8
"""Up to this many stored messages are rendered for an event stream in the event loop;
more (a page catching up on a long session) in a worker thread, so the loop goes on
serving the others meanwhile."""


class Participants:
    """The participant's pages."""

    def __init__(self, runtime: StudyRuntime) -> None:
        self.rt = runtime
        self.secret = runtime.db.secret()
        self.design = runtime.benchmark.design
        self.chats = ChatPages(runtime.db)

    def _who(self, request: Request) -> Assignment:
        found = self.rt.db.participant_by_token(request.path_params["token"])
        if found is None:
            raise HTTPException(404, "this invite link is not valid")
        return found

    def _key(self, who: Assignment, request: Request) -> tuple[int, SessionKey]:
        pos = int(request.path_params["pos"])
        if not 1 <= pos <= len(who.blocks) * SESSIONS:
            raise HTTPException(404, "no such session")
        return pos, self._keys(who)[pos - 1]

    def _keys(self, who: Assignment) -> list[SessionKey]:
        """Every session in the order the participant plays them."""
        return [
            SessionKey(who.participant, b.condition, b.first + i)
            for b in who.blocks
            for i in range(SESSIONS)
        ]

    def _progress(self, who: Assignment) -> list[str]:
        """Each session's state: done; saving (answered, its memory still learning); ready
        (the next one); waiting (its turn has not come)."""
        states, ready = [], True
        for key in self._keys(who):
            if self.rt.is_stored(key):
                states.append("done")
            elif ready:
                saving = self.rt.db.survey(key) is not None
                states.append("saving" if saving else "ready")
                if saving:
                    self.rt.session(key)  # after a restart, its play task finishes it
                ready = False
            else:
                states.append("waiting")
        return states

    def _context(self, who: Assignment, study_type: str = "", **extra: Any) -> dict[str, Any]:
        """What every page shows; the card is the study type's (default: the first)."""
        study_type = study_type or who.study_types[0]
        return {
            "who": who,
            "csrf": csrf_token(self.secret, who.participant),
            "title": self.design.title,
            "prefs": preference_card(who.preferences[study_type]),
            "study_name": self.design.study_type(study_type).name,
            **extra,
        }

    def _part(self, who: Assignment, pos: int) -> tuple[int, str]:
        """The part (1-based) a session position belongs to, and its study type."""
        block = (pos - 1) // SESSIONS
        return block + 1, who.blocks[block].study_type

    async def home(self, request: Request) -> Response:
        who = self._who(request)
        token = request.path_params["token"]
        if not self.rt.db.consented(who.participant):
            return page(
                "consent.html",
                **self._context(who, token=token, consent=self.design.consent),
            )
        states = self._progress(who)
        parts = [states[b * SESSIONS : (b + 1) * SESSIONS] for b in range(len(who.blocks))]
        names = [self.design.study_type(b.study_type).name for b in who.blocks]
        current = next((i for i, s in enumerate(states) if s != "done"), len(states) - 1)
        closing = self.rt.db.closing(who.participant)
        return page(
            "home.html",
            **self._context(
                who,
                self._part(who, current + 1)[1],
                token=token,
                names=names,
                parts=parts,
                closing=closing,
                all_done=states[-1] == "done",
                saving="saving" in states,
            ),
        )

    async def consent(self, request: Request) -> Response:
        who = self._who(request)
        values = await form(request, self.secret, who.participant)
        if values.get("agree") != "yes":
            raise HTTPException(400, "tick the box to agree before starting")
        self.rt.db.consent(who.participant)
        self._join_consented()
        return RedirectResponse(f"/p/{request.path_params['token']}", status_code=303)

    def _join_consented(self) -> None:
        """Put the participants who consented among the run's users (the report counts them);
        those who consented before keep their place."""
        consented = [a for a in self.rt.db.assignments() if self.rt.db.consented(a.participant)]
        users = [self.rt.benchmark.user(a.participant) for a in consented]
        self.rt.store.put_users(
            [UserRecord(user_id=u.id, spec=u.model_dump(mode="json")) for u in users]
        )

    def _open(self, request: Request) -> tuple[Assignment, int, SessionKey, str]:
        """The participant, the session position and key; 409 when its turn has not come."""
        who = self._who(request)
        if not self.rt.db.consented(who.participant):
            raise HTTPException(409, "agree to the study on its first page first")
        pos, key = self._key(who, request)
        if self._progress(who)[pos - 1] in ("waiting", "saving"):
            raise HTTPException(409, "finish the sessions before this one first")
        return who, pos, key, request.path_params["token"]

    async def session(self, request: Request) -> Response:
        who, pos, key, token = self._open(request)
        stored = self.rt.is_stored(key)
        live = None if stored else self.rt.session(key)
        state: State = live.state if live is not None else "done"
        if state == "survey":
            return RedirectResponse(f"/p/{token}/s/{pos}/survey", status_code=303)
        spec = self.rt.benchmark.block_sessions(who.participant, key.condition)[key.index]
        part, study_type = self._part(who, pos)
        context = self._context(
            who,
            study_type,
            token=token,
            pos=pos,
            part=part,
            number=(pos - 1) % SESSIONS + 1,
            problem=self.design.problem_bank()[spec.id],
            state=state,
            problem_text=live.problem if live is not None else "",
            error=state == "error" or (stored and self.rt.failed(key)),
            max_chars=self.design.max_message_chars,
            ended=self.rt.db.ended(key),
        )
        # A long session's page takes long to read and render: not in the event loop.
        return await asyncio.to_thread(_session_page, self.chats, key, context)

    async def message(self, request: Request) -> Response:
        who, pos, key, token = self._open(request)
        values = await form(request, self.secret, who.participant)
        text = values.get("text", "").strip()
        if not text:
            raise HTTPException(400, "write a message first")
        if len(text) > self.design.max_message_chars:
            raise HTTPException(
                400, f"messages are at most {self.design.max_message_chars} characters"
            )
        if self.rt.is_stored(key):
            raise HTTPException(409, "this session is over")
        if self.rt.db.message_count(key, "user") >= MAX_MESSAGES:
            raise HTTPException(
                409,
                f"this session has reached its limit of {MAX_MESSAGES} messages; "
                "end it to go on to its questions",
            )
        live = self.rt.session(key)
        try:
            seq = self.rt.db.add_message(key, "user", text)
        except TurnOrderError as exc:
            raise HTTPException(409, str(exc)) from None
        live.inbox.put_nowait(text)
        live.notify("thinking")
        if "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"stored": seq})
        return RedirectResponse(f"/p/{token}/s/{pos}#m{seq}", status_code=303)

    async def confirm_end(self, request: Request) -> Response:
        """The question before a session ends (its form posts to `end`)."""
        who, pos, key, token = self._open(request)
        if self.rt.db.ended(key) or self.rt.stored(key) is not None:
            return RedirectResponse(f"/p/{token}/s/{pos}/survey", status_code=303)
        part, study_type = self._part(who, pos)
        written = sum(m.speaker == "user" for m in self.rt.db.messages(key))
        return page(
            "end.html",
            **self._context(
                who,
                study_type,
                token=token,
                pos=pos,
                part=part,
                number=(pos - 1) % SESSIONS + 1,
                written=written,
            ),
        )

    async def end(self, request: Request) -> Response:
        who, pos, key, token = self._open(request)
        await form(request, self.secret, who.participant)
        if not any(m.speaker == "user" for m in self.rt.db.messages(key)):
            raise HTTPException(409, "write to the assistant before you end this session")
        if not self.rt.is_stored(key):
            live = self.rt.session(key)
            if not self.rt.db.ended(key):
                self.rt.db.end(key)
            live.end()
        return RedirectResponse(f"/p/{token}/s/{pos}/survey", status_code=303)

    async def retry(self, request: Request) -> Response:
        """Try a reply that failed every try again (the participant asked)."""
        who, pos, key, token = self._open(request)
        await form(request, self.secret, who.participant)
        live = self.rt.live.get(key)
        if live is None or not live.decide(True):
            raise HTTPException(409, "no reply is waiting to be tried again")
        if "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"state": "thinking"})
        return RedirectResponse(f"/p/{token}/s/{pos}", status_code=303)

    async def events(self, request: Request) -> Response:
        """Server-sent events: stored messages after ``after`` (agent replies as sanitized
        HTML), the reply being generated as ``delta`` pieces of plain text, why a reply
        failed (``problem``), and the session's state, until the conversation no longer
        waits for the assistant or the window ends. A session not yet in the run store is
        started (again), as its page does: after a restart the page's reconnect is what
        gets a pending reply generated."""
        _who, _pos, key, _token = self._open(request)
        try:
            after = int(request.query_params.get("after", "-1"))
        except ValueError:
            raise HTTPException(400, "after must be a whole number") from None
        live = self.rt.session(key) if not self.rt.is_stored(key) else None
        return StreamingResponse(
            self._stream(key, after, live),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def _stream(
        self, key: SessionKey, after: int, live: LiveSession | None
    ) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EVENT_WINDOW_S
        shown, told = 0, ""
        while loop.time() < deadline:
            # The session this stream follows, or the one started again in its place; once
            # it is finished (and gone from the runtime) its last state is what it says.
            live = self.rt.live.get(key) or live
            # One snapshot, nothing awaited in between: a reply is stored and its draft
            # cleared together, so the draft always belongs to the message after the last.
            messages = self.rt.db.messages(key, after)
            state, draft, version = self._now(key, live)
            if messages:
                if len(messages) > RENDER_ON_LOOP:
                    text = await asyncio.to_thread(_message_events, messages)
                else:
                    text = _message_events(messages)
                yield text  # one chunk: a long catch-up is one write, not thousands
                after, shown = messages[-1].seq, 0
            if len(draft) > shown:
                yield _event("delta", {"seq": after + 1, "offset": shown, "text": draft[shown:]})
                shown = len(draft)
            if state != told:
                if state == "failed" and live is not None:
                    yield _event("problem", live.problem)
                yield _event("state", state)
                told = state
            if live is None or state != "thinking":
                return
            await live.wait_change(version, 15.0)

    def _now(self, key: SessionKey, live: LiveSession | None) -> tuple[State, str, int]:
        """The session's state, its draft reply and its version."""
        if live is not None:
            return live.state, live.draft, live.version
        return ("error" if self.rt.failed(key) else "done"), "", 0

    async def survey(self, request: Request) -> Response:
        who, pos, key, token = self._open(request)
        if not self.rt.db.ended(key) and not self.rt.is_stored(key):
            return RedirectResponse(f"/p/{token}/s/{pos}", status_code=303)
        answered = self.rt.db.survey(key)
        _part, study_type = self._part(who, pos)
        number = (pos - 1) % SESSIONS + 1
        return page(
            "survey.html",
            **self._context(
                who,
                study_type,
                token=token,
                pos=pos,
                number=number,
                answered=answered,
                fixed=SurveyAnswers.fixed_in_first_session() if number == 1 else {},
            ),
        )

    async def answer(self, request: Request) -> Response:
        who, pos, key, token = self._open(request)
        values = await form(request, self.secret, who.participant)
        if not self.rt.db.ended(key) and not self.rt.is_stored(key):
            raise HTTPException(409, "end the conversation before the survey")
        answers = survey_answers(values, first=(pos - 1) % SESSIONS == 0)
        self.rt.db.put_survey(key, answers)
        if not self.rt.is_stored(key):
            self.rt.session(key)
            self.rt.submit_survey(key, answers)
        return RedirectResponse(f"/p/{token}", status_code=303)

    async def closing(self, request: Request) -> Response:
        who = self._who(request)
        token = request.path_params["token"]
        if self._progress(who)[-1] != "done":
            raise HTTPException(409, "the closing questions come after the last session")
        if request.method == "GET":
            return page(
                "closing.html",
                **self._context(
                    who,
                    token=token,
                    answered=self.rt.db.closing(who.participant),
                    choices=_closing_choices(who),
                ),
            )
        values = await form(request, self.secret, who.participant)
        try:
            answers = ClosingAnswers(
                preferred=values.get("preferred", ""),  # type: ignore[arg-type]
                learned=int(values.get("learned", "0") or 0),
                comments=values.get("comments", "").strip(),
            )
        except (ValidationError, ValueError) as exc:
            raise HTTPException(400, one_line(exc)) from None
        self.rt.db.close_study(who.participant, answers)
        self.rt.store_closing(who.participant)
        return RedirectResponse(f"/p/{token}/closing", status_code=303)


def survey_answers(values: dict[str, str], *, first: bool) -> SurveyAnswers:
    """A survey form's answers; in a block's first session the items it fixes (memory:
    nothing to remember yet) take their fixed answer whatever was sent.

    Raises:
        HTTPException: 400 with what is missing or wrong.
    """
    ratings = {i: int(v) if (v := values.get(i, "")).isdigit() else 0 for i in ITEM_IDS}
    if first:
        ratings.update(SurveyAnswers.fixed_in_first_session())
    try:
        return SurveyAnswers(
            ratings=ratings,
            impact=values.get("impact", ""),  # type: ignore[arg-type]
            **{t.id: values.get(t.id, "").strip() for t in FREE_TEXT},
        )
    except ValidationError as exc:
        raise HTTPException(400, one_line(exc)) from None


def _closing_choices(who: Assignment) -> list[tuple[str, str]]:
    """The closing question's choices: the parts played under the participant's first
    condition, those under the second, or no difference."""
    choices = []
    for value, condition in zip(("first", "second"), who.order, strict=False):
        parts = [str(i + 1) for i, b in enumerate(who.blocks) if b.condition == condition]
        label = "The one in part " if len(parts) == 1 else "The one in parts "
        choices.append((value, label + " and ".join(parts)))
    return [*choices, ("no difference", "No difference")]


def _message_events(messages: list[StoredMessage]) -> str:
    """Stored messages as the event stream sends them (agent replies as sanitized HTML)."""
    return "".join(
        _event(
            "message",
            {
                "seq": m.seq,
                "speaker": m.speaker,
                "text": m.text,
                "html": render_markdown(m.text) if m.speaker == "agent" else None,
            },
        )
        for m in messages
    )


def _session_page(chats: ChatPages, key: SessionKey, context: dict[str, Any]) -> Response:
    """A session's page with its messages (read and rendered in a worker thread)."""
    chat, last = chats.html(key)
    return page("session.html", chat=chat, last_seq=last, **context)


def _event(kind: str, body: object) -> str:
    return f"event: {kind}\ndata: {json.dumps(body)}\n\n"


HEADINGS = {400: "Something is missing", 404: "Not found", 409: "Not yet", 413: "Too long"}
_PARTICIPANT_PATH = re.compile(r"^/p/([A-Za-z0-9_-]+)(?:/|$)")


async def _error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "server error"
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"error": detail}, status_code=status)
    return page(
        "error.html",
        status=status,
        status_code=status,
        heading=HEADINGS.get(status, "Something went wrong"),
        detail=detail,
        back=_way_back(request),
    )


def _way_back(request: Request) -> str:
    """A participant's sessions page, for an error on one of their pages ("" for a link
    that is not valid)."""
    found = _PARTICIPANT_PATH.match(request.url.path)
    if found is None:
        return ""
    runtime: StudyRuntime = request.app.state.runtime
    token = found.group(1)
    return f"/p/{token}" if runtime.db.participant_by_token(token) is not None else ""


async def _asset(request: Request) -> Response:
    name = request.path_params["name"]
    kinds = {"style.css": "text/css", "study.js": "text/javascript"}
    if name not in kinds:
        raise HTTPException(404, "no such file")
    text = resources.files("rapport.study").joinpath(f"templates/{name}").read_text()
    return Response(text, media_type=kinds[name], headers={"cache-control": "no-cache"})


def create_app(runtime: StudyRuntime) -> Starlette:
    """The study app over a served study dir."""
    p = Participants(runtime)
    routes = [
        Route("/p/{token}", p.home),
        Route("/p/{token}/consent", p.consent, methods=["POST"]),
        Route("/p/{token}/s/{pos:int}", p.session),
        Route("/p/{token}/s/{pos:int}/message", p.message, methods=["POST"]),
        Route("/p/{token}/s/{pos:int}/end", p.confirm_end),
        Route("/p/{token}/s/{pos:int}/end", p.end, methods=["POST"]),
        Route("/p/{token}/s/{pos:int}/retry", p.retry, methods=["POST"]),
        Route("/p/{token}/s/{pos:int}/events", p.events),
        Route("/p/{token}/s/{pos:int}/survey", p.survey),
        Route("/p/{token}/s/{pos:int}/survey", p.answer, methods=["POST"]),
        Route("/p/{token}/closing", p.closing, methods=["GET", "POST"]),
        Route("/static/{name}", _asset),
        *researcher_routes(runtime),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard)],
        exception_handlers={HTTPException: _error, Exception: _error},
    )
    app.state.runtime = runtime
    return app
