"""Providers, registered lazily as ``module:attr``; SDKs are imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from ._model import ModelAPI
from ._types import ModelError

PROVIDERS: dict[str, Any] = {
    "llamacpp": "rapport.llm._llamacpp:LlamaCppAPI",
    "openai": "rapport.llm._openai:OpenAIAPI",
    "scripted": "rapport.llm._scripted:ScriptedAPI",
    "transformers": "rapport.llm._transformers:TransformersAPI",
}

DEFAULT_SPEC = "llamacpp/qwen2.5-coder-1.5b"


def load_entry(entry: Any) -> Any:
    """Import ``package.module:attr`` and return the attribute (an object is returned as is).

    Raises:
        ImportError: the module or the attribute does not exist.
    """
    if not isinstance(entry, str):
        return entry
    module, sep, attr = entry.partition(":")
    if not sep or not module or not attr:
        raise ImportError(f"'{entry}' is not module:attribute")
    try:
        return getattr(importlib.import_module(module), attr)
    except AttributeError:
        raise ImportError(f"module '{module}' has no '{attr}'") from None


def load_plugins(group: str, registry: dict[str, Any]) -> None:
    """Add the entry points of an installed package's group (``rapport.memories`` ...) to a
    registry; names already registered win. Read once per group and registry."""
    from importlib.metadata import entry_points

    if _LOADED.get(group) is registry:
        return
    _LOADED[group] = registry
    for point in entry_points(group=group):
        registry.setdefault(point.name, point.value)


_LOADED: dict[str, Any] = {}


def register_provider(name: str, provider: Any) -> None:
    """Make ``NAME/...`` model specs build ``provider`` (a class with ``from_spec(rest,
    **options)``, or its ``module:attr``)."""
    PROVIDERS[name] = provider


def create_api(spec: str, **options: Any) -> ModelAPI:
    """Build the provider for a spec string such as ``openai/gpt-4o-mini``.

    Raises:
        ModelError: unknown provider or a spec the provider rejects.
    """
    provider, sep, rest = spec.partition("/")
    if not sep or not rest:
        raise ModelError(f"bad model spec '{spec}': expected PROVIDER/NAME")
    if provider not in PROVIDERS:
        load_plugins("rapport.providers", PROVIDERS)
    if provider not in PROVIDERS:
        raise ModelError(
            f"unknown model provider '{provider}' in '{spec}' (known: {', '.join(PROVIDERS)})"
        )
    try:
        cls = load_entry(PROVIDERS[provider])
    except ImportError as exc:
        raise ModelError(f"model provider '{provider}' cannot be loaded: {exc}") from exc
    api: ModelAPI = cls.from_spec(rest, **options)
    return api
