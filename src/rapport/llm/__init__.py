"""The LLM layer: one async `Model` interface over many providers."""

from ._model import (
    Completion,
    InMemoryCache,
    Model,
    ModelAPI,
    Request,
    ResponseCache,
    derive_seed,
    parse_json_output,
    record_calls,
    stable_hash,
)
from ._registry import DEFAULT_SPEC, PROVIDERS, create_api, load_entry
from ._roles import ROLES, ModelRoles
from ._scripted import ScriptedAPI
from ._types import (
    GenerateConfig,
    Message,
    ModelCall,
    ModelError,
    ModelOutput,
    OutputValidationError,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "DEFAULT_SPEC",
    "PROVIDERS",
    "ROLES",
    "Completion",
    "GenerateConfig",
    "InMemoryCache",
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
    "ToolCall",
    "ToolSpec",
    "Usage",
    "create_api",
    "derive_seed",
    "load_entry",
    "parse_json_output",
    "record_calls",
    "stable_hash",
]
