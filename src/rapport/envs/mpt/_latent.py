"""MPT's taxonomy: the latent preference groups of generated users (package data,
``mpt_groups.yaml``). Each option of a group maps ``Domain.argument`` to the value a user
holding it picks, with phrases that state it outright."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml


@functools.cache
def latent_groups() -> dict[str, Any]:
    """Group id -> its description and options, as the package data holds them."""
    text = resources.files(__package__).joinpath("data/latent_groups.yaml").read_text("utf-8")
    return dict(yaml.safe_load(text)["groups"])
