"""Each file in configs/ (one per paper's headline experiment) loads and validates the way
``rapport run BENCHMARK --config FILE`` reads it, without running: the file's keys, the
benchmark's options, the memories, the model roles and their providers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rapport.cli import build_parser
from rapport.cli._config import config_from_args
from rapport.cli._names import options_model
from rapport.llm import PROVIDERS, ModelRoles
from rapport.memory import is_memory

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


def test_every_paper_has_its_headline_config() -> None:
    benchmarks = {yaml.safe_load(path.read_text())["benchmark"] for path in CONFIGS}
    assert benchmarks == {"collab", "mpt", "prefix", "gym"}


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_a_config_validates_as_run_reads_it(path: Path) -> None:
    benchmark = yaml.safe_load(path.read_text())["benchmark"]
    args = build_parser().parse_args(["run", benchmark, "--config", str(path)])
    config = config_from_args(args)
    model = options_model(benchmark)
    assert model is not None
    model.model_validate(config.options)
    assert config.memory and all(is_memory(m) for m in config.memory)
    ModelRoles(config.models, settings=config.model_settings).check_names()
    specs = [*config.models.values(), *(s.spec for s in config.model_settings.values())]
    assert all(str(s).startswith("openai/") for s in specs if s)  # served models
    assert {str(s).partition("/")[0] for s in specs if s} <= set(PROVIDERS)
