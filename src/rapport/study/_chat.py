"""Each session's conversation as page HTML, kept between page loads: a page renders only
the messages stored since it was last rendered, so a session of thousands of messages costs
its page a read of the new ones, not a render of all of them."""

from __future__ import annotations

import threading
from collections import OrderedDict

from markupsafe import Markup

from ._db import SessionKey, StoredMessage, StudyDB
from ._pages import environment

KEPT_SESSIONS = 256
"""How many sessions' conversations are kept rendered (the least recently read go)."""


class ChatPages:
    """The rendered conversations of recently read sessions (safe to use from threads)."""

    def __init__(self, db: StudyDB, kept: int = KEPT_SESSIONS) -> None:
        self.db, self.kept = db, kept
        self._chats: OrderedDict[SessionKey, tuple[int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def html(self, key: SessionKey) -> tuple[Markup, int]:
        """The session's messages as list items, and the position of the last (-1: none)."""
        with self._lock:
            last, html = self._chats.get(key, (-1, ""))
        new = self.db.messages(key, last)
        if new:
            html += _items(new)
            last = new[-1].seq
        with self._lock:
            kept_last = self._chats.get(key, (-1, ""))[0]
            if kept_last <= last:
                self._chats[key] = (last, html)
            self._chats.move_to_end(key)
            while len(self._chats) > self.kept:
                self._chats.popitem(last=False)
        return Markup(html), last


def _items(messages: list[StoredMessage]) -> str:
    return environment().get_template("chat.html").render(messages=messages)
