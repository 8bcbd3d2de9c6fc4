"""The release's tool schemas (OpenAI function format): the prompt listing every function, the
agent's output model (a function name and its arguments) and validation of the chosen call."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model


def _line(function: dict[str, Any]) -> str:
    props = function.get("parameters", {}).get("properties", {})
    args = []
    for name, spec in props.items():
        kind = f"one of {', '.join(map(str, spec['enum']))}" if "enum" in spec else spec.get("type")
        args.append(f"{name} ({kind})")
    return f"- {function['name']}: {function.get('description', '')} Arguments: {'; '.join(args)}"


@lru_cache(maxsize=1)
def _template() -> str:
    path = resources.files("rapport.envs.mpt") / "prompts" / "agent_release.md"
    return path.read_text(encoding="utf-8")


def tools_instructions(functions: list[dict[str, Any]]) -> str:
    """The agent's instructions listing every function it may call."""
    return _template().format(functions="\n".join(_line(f) for f in functions))


def call_model(functions: list[dict[str, Any]]) -> type[BaseModel]:
    """The agent's output: one of the functions and its arguments (values as text)."""
    names: Any = Literal[tuple(f["name"] for f in functions)]
    model: type[BaseModel] = create_model(
        "FunctionCall",
        __config__=ConfigDict(extra="forbid"),
        function=(names, Field(description="the function to call")),
        arguments=(dict[str, str], Field(default_factory=dict)),
    )
    return model


def check_call(functions: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> list[str]:
    """Problems with a call against the functions shown (empty: valid)."""
    by_name = {f["name"]: f for f in functions}
    if name not in by_name:
        return [f"unknown function '{name}'"]
    props = by_name[name].get("parameters", {}).get("properties", {})
    problems = []
    for arg, value in arguments.items():
        spec = props.get(arg)
        if spec is None:
            problems.append(f"unknown argument '{arg}'")
        elif "enum" in spec and str(value) not in {str(v) for v in spec["enum"]}:
            problems.append(f"value {value!r} not allowed for '{arg}'")
    return problems
