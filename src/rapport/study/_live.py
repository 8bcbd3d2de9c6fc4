"""Sessions in progress: each is played by the runner's own session lifecycle
(`rapport.eval.live_session`: memory context and recall, the agent, the score, the memory's
learning, the snapshot and one commit, with its fallback for a record the store cannot
take), with the participant on the other side.

A session's play task lives in the server's event loop. After a restart (or when the
participant comes back days later) it is started again from what ``study.sqlite`` holds:
the episode replays the stored messages and goes on where they stop. A page's event stream
starts it too, so a reply pending when the server stopped is generated once the page
reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rapport.envs.study import (
    SESSIONS,
    ClosingEvent,
    StudyBenchmark,
    SurveyAnswers,
)
from rapport.eval import UserTrack, live_session, model_roles
from rapport.llm import ModelRoles
from rapport.log import (
    Condition,
    ExperimentConfig,
    MemoryState,
    SessionRecord,
    SessionSpec,
    UserSpec,
)
from rapport.memory import Memory, create_memory
from rapport.store import RunDirLock, RunStore

from ._create import make_private
from ._db import STUDY_FILE, SessionKey, Speaker, StudyDB
from ._reply import RETRY_DELAYS_S, PatientAgent

log = logging.getLogger(__name__)

State = Literal["listening", "thinking", "failed", "survey", "saving", "done", "error"]
"""What the page shows: ``failed`` is a reply that failed every try, waiting for the
participant to ask again or end the session."""


@dataclass
class LiveSession:
    """One session being played: the participant's inbox and what the page is told."""

    key: SessionKey
    replay: list[tuple[Speaker, str]] = field(default_factory=list)
    """The messages stored when the session was (re)started; later ones come by the inbox."""
    state: State = "listening"
    inbox: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    answers: asyncio.Future[SurveyAnswers] | None = None
    draft: str = ""
    """The reply being generated, as streamed so far ("" once it is stored)."""
    version: int = 0
    """Bumped on every change the page should see."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    ended: bool = False
    """The participant ended the conversation."""
    problem: str = ""
    """Why the last reply failed (state ``failed``)."""
    decision: asyncio.Future[bool] | None = None
    """The participant's answer to a failed reply: True, try again; False, end."""

    async def reply_failed(self, why: str) -> bool:
        """Tell the page that the reply failed every try and wait for the participant:
        True when they ask for another try, False when they end the session."""
        if self.ended:
            return False
        self.problem, self.draft = why, ""
        self.decision = asyncio.get_running_loop().create_future()
        self.notify("failed")
        again = await self.decision
        self.decision, self.problem = None, ""
        if again:
            self.notify("thinking")
        return again

    def decide(self, again: bool) -> bool:
        """Answer a failed reply; False when none is waiting."""
        if self.decision is None or self.decision.done():
            return False
        self.decision.set_result(again)
        return True

    def end(self) -> None:
        """The participant ended the session: no more messages, and a failed reply is
        given up."""
        if not self.ended:
            self.ended = True
            self.inbox.put_nowait(None)
        self.decide(False)

    def notify(self, state: State | None = None) -> None:
        """Tell waiting pages that something changed."""
        if state is not None:
            self.state = state
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def stream(self, piece: str) -> None:
        """Add a streamed piece of the reply being generated."""
        self.draft += piece
        self.notify()

    def restart_draft(self) -> None:
        """Drop the reply streamed so far (it is being generated again)."""
        self.draft = ""
        self.notify()

    async def wait_change(self, seen: int, timeout: float) -> int:
        """Wait until the version passes ``seen`` (or the timeout); returns the version."""
        if self.version == seen:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout)
        return self.version


class _Side:
    """The participant's side of one session (`rapport.envs.study.HumanSide`)."""

    def __init__(self, db: StudyDB, live: LiveSession) -> None:
        self.db, self.live = db, live

    def transcript(self) -> list[tuple[Speaker, str]]:
        return list(self.live.replay)

    async def next_message(self) -> str | None:
        self.live.notify("listening")
        message = await self.live.inbox.get()
        if message is not None:
            self.live.notify("thinking")
        return message

    async def agent_replied(self, text: str) -> None:
        self.db.add_message(self.live.key, "agent", text)
        self.live.draft = ""  # with the store above, before anything else runs
        self.live.notify()

    async def survey(self) -> SurveyAnswers:
        stored = self.db.survey(self.live.key)
        if stored is not None:
            return stored
        self.live.answers = asyncio.get_running_loop().create_future()
        self.live.notify("survey")
        return await self.live.answers


class StudyRuntime:
    """A study dir being served: its database, run store, benchmark, models, memories and
    the sessions in progress.

    Args:
        study_dir: the study dir (made by `create_study`).
        models: model roles to use instead of those the run header names (tests).
        retry_delays: the waits before each new try of a failed reply.

    Raises:
        FileNotFoundError: not a study dir.
        PermissionError: the study dir cannot be written (serving writes every message).
        rapport.store.RunDirBusy: another process serves it.
    """

    def __init__(
        self,
        study_dir: str | Path,
        *,
        models: ModelRoles | None = None,
        retry_delays: Sequence[float] = RETRY_DELAYS_S,
    ) -> None:
        self.dir = Path(study_dir)
        self.retry_delays = tuple(retry_delays)
        check_writable(self.dir)
        make_private(self.dir)
        self.db = StudyDB(self.dir)
        self.lock = RunDirLock(self.dir)
        self.lock.acquire()
        try:
            self.store = RunStore(self.dir, create=False)
            run = self.store.run()
            self.config = run.config
            self.conditions = {c.name: c for c in run.conditions}
            self.benchmark = StudyBenchmark.from_config(run.config)
            self.benchmark.connect(self._side)
            self.models = models or build_models(self.config)
            self.memories: dict[str, Memory] = {
                c.name: create_memory(
                    c.memory, self.models, **self.config.memory_options.get(c.memory, {})
                )
                for c in run.conditions
            }
            self.live: dict[SessionKey, LiveSession] = {}
            for participant in self.db.closings():
                self.store_closing(participant)  # answers a killed server had not stored
        except BaseException:
            self.lock.release()
            raise

    def close(self) -> None:
        """Close the stores and release the dir."""
        for live in self.live.values():
            if live.task is not None:
                live.task.cancel()
        self.store.close()
        self.db.close()
        self.lock.release()

    def _side(self, spec: SessionSpec, user: UserSpec, condition: Condition) -> _Side:
        return _Side(self.db, self.live[SessionKey(user.id, condition.name, spec.index)])

    def stored(self, key: SessionKey) -> SessionRecord | None:
        """The session as committed to the run store (None: not yet)."""
        return self.store.session(key.condition, key.participant, key.index)

    def is_stored(self, key: SessionKey) -> bool:
        """Whether the session is in the run store (without reading it: a long session's
        record is large)."""
        return key.index in self.store.done(key.condition, key.participant)

    def failed(self, key: SessionKey) -> bool:
        """Whether the session is in the run store with status ``error``."""
        return key.index in self.store.error_indices(key.condition, key.participant)

    def session(self, key: SessionKey) -> LiveSession:
        """The session's live state, its play task started (again) if needed.

        Call only for a session that is not yet in the run store and whose earlier sessions
        in its block are.
        """
        live = self.live.get(key)
        if live is not None:
            return live
        # What is stored now is replayed; what comes later arrives by the inbox. Nothing
        # awaits between this read and the registration below, so no message falls between.
        messages = self.db.messages(key)
        live = LiveSession(key, replay=[(m.speaker, m.text) for m in messages])
        if messages and messages[-1].speaker == "user":
            live.state = "thinking"
        if self.db.ended(key):
            live.end()
        self.live[key] = live
        live.task = asyncio.get_running_loop().create_task(self._play(live))
        return live

    async def _play(self, live: LiveSession) -> None:
        try:
            record = await self._play_and_commit(live)
        except Exception:
            # The lifecycle records every failure of the session itself; this is the store
            # or a bug. The messages are kept: the next page load starts the session again.
            log.exception("session %s could not be played or stored", live.key)
            live.notify("error")
        else:
            live.notify("error" if record.status == "error" else "done")
        finally:
            # A page waiting on this session holds it and reads its last state.
            if self.live.get(live.key) is live:
                del self.live[live.key]

    async def _play_and_commit(self, live: LiveSession) -> SessionRecord:
        key = live.key
        user = self.benchmark.user(key.participant)
        spec = self.benchmark.block_sessions(key.participant, key.condition)[key.index]
        latest = self.store.latest_memory(key.condition, key.participant)
        if key.index % SESSIONS == 0:
            latest = None  # a block's memory starts empty: it is kept per study type too
        track = UserTrack(
            condition=self.conditions[key.condition],
            memory=self.memories[key.condition],
            user=user,
            ref=user.ref(),
            done=set(),
            latest=latest,
            version=key.index,
        )
        track.memory.restore(track.ref, latest.state if latest is not None else MemoryState())

        def agent(models: ModelRoles) -> PatientAgent:
            return PatientAgent(
                models.get("agent"),
                on_text=live.stream,
                decide=live.reply_failed,
                delays=self.retry_delays,
                restart=live.restart_draft,
            )

        return await live_session(
            track,
            spec,
            benchmark=self.benchmark,
            models=self.models,
            store=self.store,
            agent_factory=agent,
        )

    def store_closing(self, participant: str) -> bool:
        """Add a participant's closing questionnaire (as ``study.sqlite`` holds it) to their
        last session in the run store as an event, the session's attempts unchanged; False
        when that session is not stored yet. Answers already there stay as they are."""
        answers = self.db.closing(participant)
        assignment = self.benchmark.assignment(participant)
        last = assignment.blocks[-1]
        record = self.stored(SessionKey(participant, last.condition, last.first + SESSIONS - 1))
        if answers is None or record is None:
            return False
        if record.events_of(ClosingEvent):
            return True
        return self.store.add_events(record, [ClosingEvent.of(answers, assignment.order)])

    def submit_survey(self, key: SessionKey, answers: SurveyAnswers) -> None:
        """Hand stored survey answers to the session waiting for them."""
        live = self.live.get(key)
        if live is not None and live.answers is not None and not live.answers.done():
            live.answers.set_result(answers)
            live.notify("saving")


def build_models(config: ExperimentConfig) -> ModelRoles:
    """The model roles a study's run header names (no response cache: people never ask
    the same thing twice on purpose)."""
    models = model_roles(config, cache=None)
    models.check_names()
    return models


def check_writable(study_dir: Path) -> None:
    """Refuse a study dir that cannot be written, before anything is opened.

    Raises:
        PermissionError: the dir or a store in it is read-only.
    """
    for path in (study_dir, study_dir / STUDY_FILE):
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(f"{path} cannot be written: a study is served read-write")
