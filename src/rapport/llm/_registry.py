"""Providers, registered lazily as ``module:attr``; SDKs are imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from ._model import ModelAPI
from ._types import ModelError

PROVIDERS: dict[str, str] = {
    "llamacpp": "rapport.llm._llamacpp:LlamaCppAPI",
    "openai": "rapport.llm._openai:OpenAIAPI",
    "scripted": "rapport.llm._scripted:ScriptedAPI",
    "transformers": "rapport.llm._transformers:TransformersAPI",
}

DEFAULT_SPEC = "llamacpp/qwen2.5-coder-1.5b"


def load_entry(entry: str) -> Any:
    """Import ``package.module:attr`` and return the attribute."""
    module, _, attr = entry.partition(":")
    return getattr(importlib.import_module(module), attr)


def create_api(spec: str, **options: Any) -> ModelAPI:
    """Build the provider for a spec string such as ``openai/gpt-4o-mini``.

    Raises:
        ModelError: unknown provider or a spec the provider rejects.
    """
    provider, sep, rest = spec.partition("/")
    if not sep or not rest:
        raise ModelError(f"bad model spec '{spec}': expected PROVIDER/NAME")
    if provider not in PROVIDERS:
        raise ModelError(
            f"unknown model provider '{provider}' in '{spec}' (known: {', '.join(PROVIDERS)})"
        )
    cls = load_entry(PROVIDERS[provider])
    api: ModelAPI = cls.from_spec(rest, **options)
    return api
