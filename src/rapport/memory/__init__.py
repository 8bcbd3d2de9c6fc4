"""Memory methods behind one protocol: context, recall, learn, snapshot, restore."""

from ._protocol import BaseMemory, Memory, SessionInfo, UserRef
from ._registry import MEMORIES, UnknownMemoryError, create_memory

__all__ = [
    "MEMORIES",
    "BaseMemory",
    "Memory",
    "SessionInfo",
    "UnknownMemoryError",
    "UserRef",
    "create_memory",
]
