"""The LLM layer: one async `Model` interface over many providers."""

from rapport.log import ModelCall, ToolCall

from ._again import Invalid, ask_again, retry_messages
from ._lockstep import call_key, participant
from ._model import (
    Completion,
    InMemoryCache,
    Model,
    ModelAPI,
    Request,
    ResponseCache,
    TextSink,
    derive_seed,
    parse_json_output,
    record_calls,
    stable_hash,
)
from ._registry import (
    DEFAULT_SPEC,
    PROVIDERS,
    create_api,
    load_entry,
    load_plugins,
    register_provider,
)
from ._roles import ROLES, ModelRoles, is_role
from ._sanitize import redact_secrets
from ._scripted import ScriptedAPI
from ._serve import ServedModel, serve_model
from ._types import (
    ContextFull,
    GenerateConfig,
    Message,
    ModelError,
    ModelOutput,
    OutputValidationError,
    ToolSpec,
    Usage,
)
from ._weights import EMBEDDED_MODELS, EmbeddedModel, ensure_model, verify_model

__all__ = [
    "DEFAULT_SPEC",
    "EMBEDDED_MODELS",
    "PROVIDERS",
    "ROLES",
    "Completion",
    "ContextFull",
    "EmbeddedModel",
    "GenerateConfig",
    "InMemoryCache",
    "Invalid",
    "Message",
    "Model",
    "ModelAPI",
    "ModelCall",
    "ModelError",
    "ModelOutput",
    "ModelRoles",
    "OutputValidationError",
    "Request",
    "ResponseCache",
    "ScriptedAPI",
    "ServedModel",
    "TextSink",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "ask_again",
    "call_key",
    "create_api",
    "derive_seed",
    "ensure_model",
    "is_role",
    "load_entry",
    "load_plugins",
    "parse_json_output",
    "participant",
    "record_calls",
    "redact_secrets",
    "register_provider",
    "retry_messages",
    "serve_model",
    "stable_hash",
    "verify_model",
]
