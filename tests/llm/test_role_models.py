"""Models per role: settings from YAML and flags, several endpoints, roles checked first,
a cache key that knows the endpoint and the weights, and ``rapport cache info|clear``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rapport.cli import build_parser, main
from rapport.cli._config import config_from_args
from rapport.llm import Completion, Message, Model, ModelError, ModelRoles, Request
from rapport.llm._model import cache_identity
from rapport.llm._spread import SpreadAPI
from rapport.log import ExperimentConfig


def test_yaml_and_flags_give_a_role_its_own_settings(tmp_path: Path) -> None:
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "models": {
                "all": "scripted/echo",
                "agent": {"spec": "openai/m", "base_url": ["http://a/v1", "http://b/v1"]},
            },
        }
    )
    assert config.models == {"all": "scripted/echo", "agent": "openai/m"}
    assert config.model_settings["agent"].base_url == ["http://a/v1", "http://b/v1"]
    argv = ["run", "scripted", "--model", "judge=openai/j,base_url=http://x/v1,timeout=30"]
    parsed = config_from_args(build_parser().parse_args(argv))
    assert parsed.models["judge"] == "openai/j"
    assert parsed.model_settings["judge"].timeout == 30.0
    with pytest.raises(ValueError, match="extra"):
        ExperimentConfig.model_validate(
            {"benchmark": "scripted", "models": {"agent": {"spec": "x/y", "colour": 1}}}
        )


def test_several_base_urls_spread_over_the_least_busy_endpoint() -> None:
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "models": {"agent": {"spec": "openai/m", "base_url": ["http://a/v1", "http://b/v1"]}},
        }
    )
    roles = ModelRoles(config.models, settings=config.model_settings)
    api = roles.get("agent").api
    assert isinstance(api, SpreadAPI) and len(api.apis) == 2
    assert "http://a/v1" in api.base_url and "http://b/v1" in api.base_url


async def test_spread_sends_each_request_to_the_endpoint_with_fewest_outstanding() -> None:
    class Slow:
        name = "x/slow"

        def __init__(self) -> None:
            self.calls = 0

        async def complete(self, request: Request) -> Completion:
            self.calls += 1
            await asyncio.sleep(0.01)
            return Completion(text="ok")

    a, b = Slow(), Slow()
    spread = SpreadAPI([a, b])
    request = Request(messages=[Message(role="user", content="hi")])
    await asyncio.gather(*(spread.complete(request) for _ in range(6)))
    assert (a.calls, b.calls) == (3, 3)


def test_unknown_roles_and_missing_key_variables_fail_before_any_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ModelError, match="unknown model role 'agnet'"):
        ModelRoles({"all": "scripted/echo", "agnet": "scripted/echo"}).validate()
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "models": {"agent": {"spec": "openai/m", "api_key_env": "NO_SUCH_KEY_VAR"}},
        }
    )
    with pytest.raises(ModelError, match="NO_SUCH_KEY_VAR"):
        ModelRoles(
            {"all": "scripted/echo", **config.models}, settings=config.model_settings
        ).validate()


def test_the_cache_key_knows_the_endpoint_and_the_weights(tmp_path: Path) -> None:
    class Served:
        name = "openai/m"

        def __init__(self, url: str) -> None:
            self.base_url = url

    class Weights:
        name = "llamacpp/w.gguf"

        def __init__(self, path: Path) -> None:
            self.path = path

    assert cache_identity(Served("http://a/v1")) != cache_identity(Served("http://b/v1"))
    assert "pw" not in cache_identity(Served("http://u:pw@a/v1"))
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"GGUF one")
    before = cache_identity(Weights(weights))
    weights.write_bytes(b"GGUF retrained")
    assert cache_identity(Weights(weights)) != before
    assert Model(Weights(weights)).cache_identity  # type: ignore[arg-type]


def test_cache_info_and_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    assert main(["cache", "info"]) == 0
    assert "0 entries" in capsys.readouterr().out
    argv = ["run", "scripted", "--users", "1", "--sessions", "1", "--max-turns", "1"]
    assert (
        main(
            [
                *argv,
                "--model",
                "all=scripted/auto",
                "--run-dir",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["cache", "info"]) == 0
    info = capsys.readouterr().out
    assert "cache.sqlite" in info and " 0 entries" not in info
    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0
    assert ", 0 entries" in capsys.readouterr().out
