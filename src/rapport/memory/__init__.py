"""Memory methods behind one protocol: context, recall, learn, snapshot, restore."""

from rapport.log import format_call, render_session, render_sessions

from ._embed import MINILM, Embedder, HashingEmbedder, embedder_name, get_embedder, minilm_path
from ._msc_notes import MscNotesPromptsError, NotesPrompts, load_msc_notes_prompts
from ._protocol import (
    BaseMemory,
    Memory,
    MemoryOptions,
    NotesPlacement,
    Pushback,
    SessionInfo,
    UserRef,
    pushbacks,
)
from ._reflection import (
    ParsedReflection,
    ReflectionMemory,
    ReflectionOutput,
    format_transcript,
    parse_reflection,
    reflection_error,
    reflection_messages,
    reflection_schema,
    render_reflection,
)
from ._registry import (
    MEMORIES,
    UnknownMemoryError,
    create_memory,
    is_memory,
    memory_roles,
    register_memory,
)

__all__ = [
    "MEMORIES",
    "MINILM",
    "BaseMemory",
    "Embedder",
    "HashingEmbedder",
    "Memory",
    "MemoryOptions",
    "MscNotesPromptsError",
    "NotesPlacement",
    "NotesPrompts",
    "ParsedReflection",
    "Pushback",
    "ReflectionMemory",
    "ReflectionOutput",
    "SessionInfo",
    "UnknownMemoryError",
    "UserRef",
    "create_memory",
    "embedder_name",
    "format_call",
    "format_transcript",
    "get_embedder",
    "is_memory",
    "load_msc_notes_prompts",
    "memory_roles",
    "minilm_path",
    "parse_reflection",
    "pushbacks",
    "reflection_error",
    "reflection_messages",
    "reflection_schema",
    "register_memory",
    "render_reflection",
    "render_session",
    "render_sessions",
]
