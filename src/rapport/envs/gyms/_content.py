"""Package data loading for the gyms (cached; read once per process)."""

from __future__ import annotations

import functools
from importlib import resources
from string import Template
from typing import Any

import yaml


@functools.cache
def load_data(name: str) -> Any:
    """Parsed YAML from ``gyms/data/<name>``."""
    text = resources.files("rapport.envs.gyms").joinpath("data", name).read_text("utf-8")
    return yaml.safe_load(text)


def split_pool(items: list[Any], split: str) -> list[Any]:
    """Disjoint train/eval pools: every fourth item is held out for eval."""
    if split == "eval":
        return [x for i, x in enumerate(items) if i % 4 == 3]
    return [x for i, x in enumerate(items) if i % 4 != 3]


def render(name: str, **values: Any) -> str:
    """The prompt ``data/prompts/<name>.md`` with ``$placeholders`` filled."""
    path = resources.files("rapport.envs.gyms").joinpath("data", "prompts", f"{name}.md")
    return Template(path.read_text("utf-8")).safe_substitute({k: str(v) for k, v in values.items()})
