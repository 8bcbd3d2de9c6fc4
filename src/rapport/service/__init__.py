"""The memories rapport measures, for apps: a Python API (`MemoryHub`), an HTTP service with
tenants and durable learning (`create_app`), and an OpenAI-compatible proxy that puts a
user's memory into each request and learns from the conversation when it ends."""

from ._app import ServiceSettings, create_app
from ._hub import ChatMessage, Context, LearnReceipt, MemoryHub
from ._proxy import NOTES_FRAME, Upstream, with_memory

__all__ = [
    "NOTES_FRAME",
    "ChatMessage",
    "Context",
    "LearnReceipt",
    "MemoryHub",
    "ServiceSettings",
    "Upstream",
    "create_app",
    "with_memory",
]
