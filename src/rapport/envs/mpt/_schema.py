"""API schemas of the MPT domains: loading, renamed variants, validation, prompt rendering."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, create_model

from ._latent import latent_groups

ArgKind = Literal["categorical", "numeric", "date", "time", "text"]
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{1,2}:\d{2}$")


@dataclass(frozen=True)
class ArgSpec:
    """One argument of an API: its kind, allowed values and whether it is required."""

    name: str
    kind: ArgKind
    values: tuple[Any, ...] = ()
    required: bool = False
    description: str = ""

    def allows(self, value: Any) -> bool:
        """Whether a value is allowed for this argument (compared as normalized text)."""
        if value is None:
            return False
        if self.values:
            return norm(value) in {norm(v) for v in self.values}
        text = str(value).strip()
        if self.kind == "date":
            return bool(_DATE.match(text))
        if self.kind == "time":
            return bool(_TIME.match(text))
        return bool(text)


@dataclass(frozen=True)
class ApiSchema:
    """A callable API of one domain (canonical or a renamed variant).

    ``canonical`` maps each argument name here to the canonical argument name, and
    ``value_map`` maps canonical values to this schema's values (renamed variants only).
    """

    domain: str
    name: str
    description: str
    args: dict[str, ArgSpec]
    intents: tuple[str, ...] = ()
    variant: bool = False
    canonical: dict[str, str] = field(default_factory=dict)
    value_map: dict[str, dict[str, Any]] = field(default_factory=dict)

    def local_arg(self, canonical_arg: str) -> str:
        """This schema's name for a canonical argument."""
        for local, canon in self.canonical.items():
            if canon == canonical_arg:
                return local
        return canonical_arg

    def local_value(self, canonical_arg: str, value: Any) -> Any:
        """This schema's spelling of a canonical value."""
        return self.value_map.get(canonical_arg, {}).get(str(value), value)

    def required(self) -> list[str]:
        """The required argument names."""
        return [a.name for a in self.args.values() if a.required]

    def to_json(self) -> dict[str, Any]:
        """A JSON-schema-like description for prompts and records."""
        props: dict[str, Any] = {}
        for arg in self.args.values():
            prop: dict[str, Any] = {"kind": arg.kind, "description": arg.description}
            if arg.values:
                prop["values"] = list(arg.values)
            props[arg.name] = prop
        return {
            "name": self.name,
            "description": self.description,
            "required": self.required(),
            "arguments": props,
        }


def norm(value: Any) -> str:
    """Normalized text of an argument value (case, spacing, bools and ints)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).strip().lower().split())


@lru_cache(maxsize=1)
def load_data() -> dict[str, Any]:
    """The packaged domain and preference data."""
    root = resources.files("rapport.envs.mpt") / "data"
    domains = yaml.safe_load((root / "domains.yaml").read_text(encoding="utf-8"))
    return {"domains": domains["domains"], "groups": latent_groups()}


@lru_cache(maxsize=64)
def domain_schema(domain: str, variant: bool = False) -> ApiSchema:
    """The API of a domain, or its renamed variant.

    Raises:
        KeyError: unknown domain, or no variant for it.
    """
    raw = load_data()["domains"][domain]
    args = {
        name: ArgSpec(
            name,
            spec["kind"],
            tuple(spec.get("values", ())),
            bool(spec.get("required", False)),
            spec.get("description", ""),
        )
        for name, spec in raw["args"].items()
    }
    base = ApiSchema(domain, raw["api"], raw["description"], args, tuple(raw["intent"]))
    if not variant:
        return base
    return _variant(base, raw["variant"])


def _variant(base: ApiSchema, raw: dict[str, Any]) -> ApiSchema:
    rename: dict[str, str] = raw.get("rename", {})
    values: dict[str, dict[str, Any]] = {
        arg: {str(k): v for k, v in mapping.items()}
        for arg, mapping in raw.get("values", {}).items()
    }
    args: dict[str, ArgSpec] = {}
    canonical: dict[str, str] = {}
    for name, spec in base.args.items():
        local = rename.get(name, name)
        mapped = tuple(values.get(name, {}).get(str(v), v) for v in spec.values)
        args[local] = ArgSpec(local, spec.kind, mapped, spec.required, spec.description)
        canonical[local] = name
    return ApiSchema(
        base.domain, raw["api"], base.description, args, base.intents, True, canonical, values
    )


def has_variant(domain: str) -> bool:
    """Whether the domain ships a renamed variant."""
    return "variant" in load_data()["domains"][domain]


def domains() -> list[str]:
    """All domain names, in data order."""
    return list(load_data()["domains"])


def validate_call(schema: ApiSchema, name: str, arguments: dict[str, Any]) -> list[str]:
    """Problems with a call against a schema (empty: valid)."""
    problems: list[str] = []
    if name != schema.name:
        problems.append(f"function '{name}' is not {schema.name}")
    for arg, value in arguments.items():
        spec = schema.args.get(arg)
        if spec is None:
            problems.append(f"unknown argument '{arg}'")
        elif not spec.allows(value):
            problems.append(f"value {value!r} not allowed for '{arg}'")
    problems += [f"missing required '{a}'" for a in schema.required() if a not in arguments]
    return problems


def arguments_model(schema: ApiSchema) -> type[BaseModel]:
    """A pydantic model of the call's arguments: enums for value sets, optional extras."""
    fields: dict[str, Any] = {}
    for arg in schema.args.values():
        annotation = _annotation(arg)
        if arg.required:
            fields[arg.name] = (annotation, Field(description=arg.description))
        else:
            fields[arg.name] = (annotation | None, Field(default=None, description=arg.description))
    model: type[BaseModel] = create_model(
        f"{schema.name}Arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _annotation(arg: ArgSpec) -> Any:
    if arg.values:
        return Literal[tuple(arg.values)]
    if arg.kind == "date":
        return Annotated[str, Field(pattern=_DATE.pattern)]
    if arg.kind == "time":
        return Annotated[str, Field(pattern=_TIME.pattern)]
    return Annotated[str, Field(min_length=1, max_length=80)]


def schema_from_json(raw: dict[str, Any], domain: str = "") -> ApiSchema:
    """Rebuild a schema from `ApiSchema.to_json` output (values kept, renames not)."""
    required = set(raw.get("required", []))
    args = {
        name: ArgSpec(
            name,
            spec.get("kind", "text"),
            tuple(spec.get("values", ())),
            name in required,
            spec.get("description", ""),
        )
        for name, spec in raw.get("arguments", {}).items()
    }
    return ApiSchema(domain or raw["name"], raw["name"], raw.get("description", ""), args)


def describe(schema: ApiSchema) -> str:
    """The schema as prompt lines: one argument a line with kind, values and whether required."""
    lines = [f"Function: {schema.name} - {schema.description}", "Arguments:"]
    for arg in schema.args.values():
        kind = f"one of {', '.join(map(str, arg.values))}" if arg.values else arg.kind
        need = "required" if arg.required else "optional"
        lines.append(f"- {arg.name} ({need}; {kind}): {arg.description}")
    return "\n".join(lines)
