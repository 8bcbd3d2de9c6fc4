"""What participants say and answer, in ``study.sqlite`` beside the run store.

Every write is its own committed transaction (WAL, ``synchronous=FULL``) before the caller
acknowledges it, so a killed server loses nothing it said it received. Tokens are kept as
SHA-256 digests only. The file (and the ``-wal``/``-shm`` files SQLite makes beside it with
the same mode) is readable by its owner only: it holds what participants wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rapport.envs.study import Assignment, ClosingAnswers, SurveyAnswers
from rapport.store import connect_readonly, write_transaction

STUDY_FILE = "study.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (
  id TEXT PRIMARY KEY, token_hash TEXT UNIQUE NOT NULL, position INTEGER NOT NULL,
  assignment TEXT NOT NULL, consented_at REAL, closing TEXT, closed_at REAL,
  revoked_at REAL, expires_at REAL);
CREATE TABLE IF NOT EXISTS messages (
  participant TEXT NOT NULL, condition TEXT NOT NULL, idx INTEGER NOT NULL, seq INTEGER NOT NULL,
  speaker TEXT NOT NULL, text TEXT NOT NULL, at REAL NOT NULL,
  PRIMARY KEY (participant, condition, idx, seq));
CREATE TABLE IF NOT EXISTS ended (
  participant TEXT NOT NULL, condition TEXT NOT NULL, idx INTEGER NOT NULL, at REAL NOT NULL,
  PRIMARY KEY (participant, condition, idx));
CREATE TABLE IF NOT EXISTS surveys (
  participant TEXT NOT NULL, condition TEXT NOT NULL, idx INTEGER NOT NULL,
  answers TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (participant, condition, idx));
"""

Speaker = Literal["user", "agent"]


class TurnOrderError(ValueError):
    """A participant message while the agent's reply is still pending (or after the end)."""


@dataclass(frozen=True)
class SessionKey:
    """One session of one participant: the condition block and the index in it."""

    participant: str
    condition: str
    index: int


@dataclass(frozen=True)
class StoredMessage:
    seq: int
    speaker: Speaker
    text: str
    at: float


PRIVATE_FILE = 0o600
"""The mode of a study's files: participants' words are for the researcher only."""
PRIVATE_DIR = 0o700


def private_file(path: Path) -> None:
    """Make ``path`` an empty file only its owner can read, when it does not exist yet
    (SQLite then keeps that mode, and gives it to the files it makes beside it)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def digest(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """An unguessable URL-safe token (192 bits)."""
    return secrets.token_urlsafe(24)


class StudyDB:
    """The participants' side of a study dir.

    Args:
        study_dir: the study dir.
        create: create ``study.sqlite`` when missing (else FileNotFoundError).
        readonly: open for reading only (``rapport study status``): nothing is created or
            written, so a study on a read-only disk can be read.
    """

    def __init__(
        self, study_dir: str | Path, *, create: bool = False, readonly: bool = False
    ) -> None:
        self.path = Path(study_dir) / STUDY_FILE
        if (readonly or not create) and not self.path.is_file():
            raise FileNotFoundError(f"no study found in {study_dir} (missing {STUDY_FILE})")
        self._lock = threading.Lock()
        if readonly:
            self._conn = connect_readonly(self.path)
            self._conn.row_factory = sqlite3.Row
            return
        private_file(self.path)
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(_SCHEMA)
        self._add_columns()

    def _add_columns(self) -> None:
        """Bring a study made before invites could be revoked up to the schema."""
        have = {r["name"] for r in self._conn.execute("PRAGMA table_info(participants)")}
        with self._write() as conn:
            for column in ("revoked_at", "expires_at"):
                if column not in have:
                    conn.execute(f"ALTER TABLE participants ADD COLUMN {column} REAL")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._conn, self._lock)

    # --- set-up ---------------------------------------------------------------------------

    def initialise(self, assignments: list[Assignment]) -> tuple[str, dict[str, str]]:
        """Store the participants with fresh tokens; returns (researcher token,
        participant -> token). Only the digests are kept."""
        researcher = new_token()
        tokens = {a.participant: new_token() for a in assignments}
        with self._write() as conn:
            conn.execute("INSERT INTO meta VALUES ('researcher', ?)", (digest(researcher),))
            conn.execute("INSERT INTO meta VALUES ('csrf_secret', ?)", (secrets.token_hex(32),))
            conn.executemany(
                "INSERT INTO participants (id, token_hash, position, assignment) VALUES (?,?,?,?)",
                [
                    (a.participant, digest(tokens[a.participant]), i, a.model_dump_json())
                    for i, a in enumerate(assignments)
                ],
            )
        return researcher, tokens

    def secret(self) -> bytes:
        """The key CSRF tokens are derived with."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='csrf_secret'").fetchone()
        return bytes.fromhex(row["value"])

    def is_researcher(self, token: str) -> bool:
        """Whether a token is the researcher's."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='researcher'").fetchone()
        return row is not None and hmac.compare_digest(row["value"], digest(token))

    # --- participants ---------------------------------------------------------------------

    def participant_by_token(self, token: str) -> Assignment | None:
        """The participant an invite token belongs to (None: no one, or an invite that was
        revoked or has expired)."""
        if not token or len(token) > 100:
            return None
        row = self._conn.execute(
            "SELECT assignment, revoked_at, expires_at FROM participants WHERE token_hash=?",
            (digest(token),),
        ).fetchone()
        if row is None or row["revoked_at"] is not None:
            return None
        if row["expires_at"] is not None and row["expires_at"] <= time.time():
            return None
        return Assignment.model_validate_json(row["assignment"])

    def revoke(self, participants: list[str]) -> list[str]:
        """Revoke invites now (their links stop working; what was stored stays); returns
        the participants not found (then none is revoked)."""
        missing = [p for p in participants if not self._known(p)]
        if missing:
            return missing  # nothing revoked: the researcher fixes the list first
        with self._write() as conn:
            conn.executemany(
                "UPDATE participants SET revoked_at=? WHERE id=? AND revoked_at IS NULL",
                [(time.time(), p) for p in participants],
            )
        return missing

    def expire(self, at: float | None) -> None:
        """Make every invite stop working at ``at`` (epoch seconds; None: never)."""
        with self._write() as conn:
            conn.execute("UPDATE participants SET expires_at=?", (at,))

    def _known(self, participant: str) -> bool:
        row = self._conn.execute("SELECT 1 FROM participants WHERE id=?", (participant,))
        return row.fetchone() is not None

    def assignments(self) -> list[Assignment]:
        """Every participant, in order."""
        rows = self._conn.execute("SELECT assignment FROM participants ORDER BY position")
        return [Assignment.model_validate_json(r["assignment"]) for r in rows]

    def consent(self, participant: str) -> None:
        """Record consent (the first time only)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE participants SET consented_at=? WHERE id=? AND consented_at IS NULL",
                (time.time(), participant),
            )

    def consented(self, participant: str) -> bool:
        row = self._conn.execute(
            "SELECT consented_at FROM participants WHERE id=?", (participant,)
        ).fetchone()
        return row is not None and row["consented_at"] is not None

    def close_study(self, participant: str, answers: ClosingAnswers) -> None:
        """Store the closing questionnaire (the first answers stay)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE participants SET closing=?, closed_at=? WHERE id=? AND closing IS NULL",
                (answers.model_dump_json(), time.time(), participant),
            )

    def closing(self, participant: str) -> ClosingAnswers | None:
        row = self._conn.execute(
            "SELECT closing FROM participants WHERE id=?", (participant,)
        ).fetchone()
        return (
            ClosingAnswers.model_validate_json(row["closing"]) if row and row["closing"] else None
        )

    # --- sessions -------------------------------------------------------------------------

    def messages(self, key: SessionKey, after: int = -1) -> list[StoredMessage]:
        """A session's messages after position ``after``, in order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, speaker, text, at FROM messages WHERE participant=? AND condition=? "
                "AND idx=? AND seq>? ORDER BY seq",
                (key.participant, key.condition, key.index, after),
            ).fetchall()
        return [StoredMessage(r["seq"], r["speaker"], r["text"], r["at"]) for r in rows]

    def message_count(self, key: SessionKey, speaker: Speaker | None = None) -> int:
        """How many messages a session holds (by ``speaker``: theirs only)."""
        sql = "SELECT COUNT(*) FROM messages WHERE participant=? AND condition=? AND idx=?"
        params: tuple[object, ...] = (key.participant, key.condition, key.index)
        if speaker is not None:
            sql, params = sql + " AND speaker=?", (*params, speaker)
        row = self._conn.execute(sql, params).fetchone()
        return int(row[0])

    def add_message(self, key: SessionKey, speaker: Speaker, text: str) -> int:
        """Append and commit a message; returns its position.

        Raises:
            TurnOrderError: a participant message while a reply is pending or after the end.
        """
        with self._write() as conn:
            params = (key.participant, key.condition, key.index)
            last = conn.execute(
                "SELECT seq, speaker FROM messages WHERE participant=? AND condition=? AND idx=? "
                "ORDER BY seq DESC LIMIT 1",
                params,
            ).fetchone()
            if speaker == "user":
                if last is not None and last["speaker"] == "user":
                    raise TurnOrderError("wait for the assistant's reply before writing again")
                if self._ended(conn, key):
                    raise TurnOrderError("this session is over")
            seq = 0 if last is None else last["seq"] + 1
            conn.execute(
                "INSERT INTO messages VALUES (?,?,?,?,?,?,?)",
                (*params, seq, speaker, text, time.time()),
            )
        return seq

    def add_messages(self, key: SessionKey, messages: list[tuple[Speaker, str]]) -> None:
        """Append a session's messages as given, in one transaction (a transcript brought
        in from elsewhere; the load benchmark's long session)."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT MAX(seq) FROM messages WHERE participant=? AND condition=? AND idx=?",
                (key.participant, key.condition, key.index),
            ).fetchone()
            start = 0 if row[0] is None else row[0] + 1
            conn.executemany(
                "INSERT INTO messages VALUES (?,?,?,?,?,?,?)",
                [
                    (key.participant, key.condition, key.index, start + i, who, text, time.time())
                    for i, (who, text) in enumerate(messages)
                ],
            )

    @staticmethod
    def _ended(conn: sqlite3.Connection, key: SessionKey) -> bool:
        return (
            conn.execute(
                "SELECT 1 FROM ended WHERE participant=? AND condition=? AND idx=?",
                (key.participant, key.condition, key.index),
            ).fetchone()
            is not None
        )

    def end(self, key: SessionKey) -> None:
        """Record that the participant ended the conversation."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO ended VALUES (?,?,?,?)",
                (key.participant, key.condition, key.index, time.time()),
            )

    def ended(self, key: SessionKey) -> bool:
        return self._ended(self._conn, key)

    def put_survey(self, key: SessionKey, answers: SurveyAnswers) -> None:
        """Store a session's survey (the first answers stay)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO surveys VALUES (?,?,?,?,?)",
                (key.participant, key.condition, key.index, answers.model_dump_json(), time.time()),
            )

    def survey(self, key: SessionKey) -> SurveyAnswers | None:
        row = self._conn.execute(
            "SELECT answers FROM surveys WHERE participant=? AND condition=? AND idx=?",
            (key.participant, key.condition, key.index),
        ).fetchone()
        return SurveyAnswers.model_validate_json(row["answers"]) if row else None

    def counts(self) -> dict[str, int]:
        """Totals for ``rapport study status``."""
        one = self._conn.execute
        return {
            "participants": one("SELECT COUNT(*) FROM participants").fetchone()[0],
            "consented": one(
                "SELECT COUNT(*) FROM participants WHERE consented_at IS NOT NULL"
            ).fetchone()[0],
            "closed": one("SELECT COUNT(*) FROM participants WHERE closing IS NOT NULL").fetchone()[
                0
            ],
            "messages": one("SELECT COUNT(*) FROM messages").fetchone()[0],
            "surveys": one("SELECT COUNT(*) FROM surveys").fetchone()[0],
        }

    def closings(self) -> dict[str, ClosingAnswers]:
        """Every closing questionnaire, by participant."""
        rows = self._conn.execute("SELECT id, closing FROM participants WHERE closing IS NOT NULL")
        return {r["id"]: ClosingAnswers.model_validate_json(r["closing"]) for r in rows}

    def as_json(self) -> str:
        """Everything participants said and answered, for export."""
        tables = {}
        for name in ("messages", "ended", "surveys"):
            tables[name] = [dict(r) for r in self._conn.execute(f"SELECT * FROM {name}")]
        tables["closing"] = [
            {"participant": p, **c.model_dump()} for p, c in self.closings().items()
        ]
        return json.dumps(tables)
