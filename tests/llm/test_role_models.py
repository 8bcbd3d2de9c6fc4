"""Models per role: settings from YAML and flags, several endpoints, roles checked first,
a cache key that knows the endpoint and the weights, and ``rapport cache info|clear``."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rapport.cli import UsageError, build_parser, main
from rapport.cli._config import config_from_args
from rapport.eval import prepare_experiment
from rapport.llm import (
    EMBEDDED_MODELS,
    Completion,
    GenerateConfig,
    InMemoryCache,
    Message,
    Model,
    ModelAPI,
    ModelError,
    ModelRoles,
    Request,
    ScriptedAPI,
)
from rapport.llm._loopback import LoopbackSettings, run_loopback
from rapport.llm._model import cache_identity
from rapport.llm._spread import SpreadAPI
from rapport.log import ExperimentConfig, RoleModel, Sampling
from rapport.report import build_report
from rapport.store import RunStore


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


@pytest.mark.race
async def test_spread_sends_each_request_to_the_endpoint_with_fewest_outstanding() -> None:
    class Slow(ModelAPI):
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
    class Served(ModelAPI):
        name = "openai/m"

        def __init__(self, url: str) -> None:
            self.base_url = url

        async def complete(self, request: Request) -> Completion:
            raise AssertionError("not called")

    class Weights(ModelAPI):
        name = "llamacpp/w.gguf"

        def __init__(self, path: Path) -> None:
            self.path = path

        async def complete(self, request: Request) -> Completion:
            raise AssertionError("not called")

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


# --- sampling defaults per role ---


def _recorder(name: str = "scripted/rec") -> ScriptedAPI:
    return ScriptedAPI(responder=lambda _request: "ok", name=name)


async def test_sampling_defaults_fill_only_what_the_call_leaves_unset() -> None:
    agent, user = _recorder("scripted/a"), _recorder("scripted/u")
    roles = ModelRoles(
        {"agent": agent, "user": user},
        sampling={
            "all": Sampling(temperature=0.5, top_p=0.8),
            "user": Sampling(temperature=0.9, max_tokens=64, seed=7),
        },
    )
    hello = [Message(role="user", content="hi")]
    await roles.get("user").generate(hello)
    await roles.get("user").generate(hello, config=GenerateConfig(max_tokens=10, seed=3))
    await roles.get("agent").generate(hello, config=GenerateConfig(temperature=0.0))
    first, second = (r.config for r in user.requests)
    assert (first.temperature, first.top_p, first.max_tokens, first.seed) == (0.9, 0.8, 64, 7)
    assert (second.temperature, second.max_tokens, second.seed) == (0.9, 10, 3)
    (own,) = (r.config for r in agent.requests)
    assert (own.temperature, own.top_p, own.max_tokens) == (0.0, 0.8, 512)
    assert own.seed is not None  # derived from the run seed and the request


def test_sampling_keys_sit_beside_the_spec_in_yaml_and_on_the_command_line(
    tmp_path: Path,
) -> None:
    config_file = tmp_path / "c.yaml"
    config_file.write_text(
        "models:\n"
        "  all: {spec: scripted/auto, temperature: 0.2}\n"
        "  user: {temperature: 1.0, max_tokens: 300}\n"
        "  judge: {spec: openai/j, base_url: http://127.0.0.1:9/v1, seed: 11}\n"
    )
    argv = ["run", "scripted", "--config", str(config_file)]
    argv += ["--model", "agent=scripted/echo,top_p=0.9,max_tokens=128"]
    config = config_from_args(build_parser().parse_args(argv))
    assert config.models == {"all": "scripted/auto", "judge": "openai/j", "agent": "scripted/echo"}
    assert {role: s.values() for role, s in config.sampling.items()} == {
        "all": {"temperature": 0.2},
        "user": {"temperature": 1.0, "max_tokens": 300},
        "judge": {"seed": 11},
        "agent": {"top_p": 0.9, "max_tokens": 128},
    }
    assert "user" not in config.models and config.model_settings["judge"].base_url
    with pytest.raises(UsageError, match="temperature"):
        config_from_args(
            build_parser().parse_args(["run", "scripted", "--model", "agent=x/y,temperature=hot"])
        )


def test_sampling_defaults_are_part_of_the_run_and_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    run_dir = tmp_path / "run"
    argv = ["run", "scripted", "--users", "1", "--sessions", "1", "--max-turns", "1"]
    argv += ["--run-dir", str(run_dir), "--no-progress", "--model", "all=scripted/auto"]
    assert main([*argv, "--model", "user=scripted/auto,temperature=0.7"]) == 0
    with RunStore(run_dir, create=False) as store:
        assert store.run().config.sampling["user"].temperature == 0.7
    description = build_report(run_dir).description
    assert description is not None
    uses = {m.role: m.sampling for m in description.models}
    assert uses["user"] == {"temperature": 0.7} and uses["agent"] == {}
    capsys.readouterr()
    # Sampling changes results: a resume with other defaults is another run.
    assert main([*argv, "--model", "user=scripted/auto,temperature=0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sampling" in err[0]


# --- settings of `all` ---


def test_the_settings_of_all_reach_only_roles_of_the_same_provider() -> None:
    roles = ModelRoles(
        {"all": "openai/m", "judge": "scripted/echo", "memory": "openai/other"},
        settings={
            "all": RoleModel(base_url="http://127.0.0.1:9/v1", timeout=30),
            "user": RoleModel(timeout=7),
        },
    )
    assert roles.options("judge") == {}
    assert roles.options("memory") == {"base_url": "http://127.0.0.1:9/v1", "timeout": 30}
    assert roles.options("user") == {"base_url": "http://127.0.0.1:9/v1", "timeout": 7}
    assert roles.get("judge").name == "scripted/echo"  # no base_url handed to it


# --- what is checked before anything is written ---


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _scripted_run(tmp_path: Path, *models: str) -> list[str]:
    argv = ["run", "scripted", "--users", "1", "--sessions", "1", "--max-turns", "1"]
    argv += ["--run-dir", str(tmp_path / "run"), "--no-progress"]
    for spec in models:
        argv += ["--model", spec]
    return argv


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rapport: "), err
    return err[0]


@pytest.mark.race
def test_an_unreachable_server_is_one_line_exit_2_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("RAPPORT_HOME", str(home))
    url = f"http://127.0.0.1:{_free_port()}/v1"
    argv = _scripted_run(tmp_path, "all=scripted/auto", f"user=openai/m,base_url={url}")
    line = _one_line_exit_2(argv, capsys)
    assert "model role 'user'" in line and "cannot reach" in line and url in line
    assert not (tmp_path / "run").exists() and not home.exists()


@pytest.mark.race
def test_each_of_several_base_urls_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    down = f"http://127.0.0.1:{_free_port()}/v1"
    with run_loopback(LoopbackSettings(latency_s=0.0, idle_timeout_s=60)) as up:
        spread = f"agent=openai/loopback,base_url={up.base_url},base_url={down}"
        line = _one_line_exit_2(_scripted_run(tmp_path, "all=scripted/auto", spread), capsys)
        assert "1 of 2 endpoints" in line and down in line and up.base_url not in line
        both = f"agent=openai/loopback,base_url={up.base_url},base_url={up.base_url}/"
        assert main(_scripted_run(tmp_path, "all=scripted/auto", both)) == 0
        assert up.requests > 0


@pytest.mark.race
def test_a_server_that_does_not_answer_fails_within_the_role_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    with socket.socket() as silent:  # takes connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        argv = _scripted_run(tmp_path, f"all=openai/m,base_url={url},timeout=0.5")
        line = _one_line_exit_2(argv, capsys)
    assert "no answer in 0.5 s" in line and url in line
    assert not (tmp_path / "run").exists()


@pytest.mark.race
def test_a_server_that_refuses_the_key_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(401, "bad key")

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("SOME_KEY_21", "sk-wrong")
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        spec = f"all=openai/m,base_url={url},api_key_env=SOME_KEY_21"
        line = _one_line_exit_2(_scripted_run(tmp_path, spec), capsys)
        assert "refused the API key" in line and "sk-wrong" not in line
    finally:
        server.shutdown()
        server.server_close()
    assert not (tmp_path / "run").exists()


def test_a_role_nothing_in_the_run_uses_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    for role in ("judge", "judge2", "memory"):
        argv = _scripted_run(tmp_path, "all=scripted/auto", f"{role}=scripted/echo")
        line = _one_line_exit_2(argv, capsys)
        assert f"model role '{role}' is set, but nothing in this run uses it" in line
        assert "agent, user" in line
    yaml_only = tmp_path / "c.yaml"
    yaml_only.write_text("models: {judge: {temperature: 0.3}}\n")
    argv = [*_scripted_run(tmp_path, "all=scripted/auto"), "--config", str(yaml_only)]
    assert "'judge'" in _one_line_exit_2(argv, capsys)
    assert not (tmp_path / "run").exists()
    # A memory that calls a model uses the memory role.
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "memory": ["reflection"],
            "models": {"all": "scripted/auto", "memory": "scripted/echo"},
            "run_dir": tmp_path / "run",
            "cache": False,
        }
    )
    assert prepare_experiment(config).models.get("memory").name == "scripted/echo"


def test_a_role_left_on_embedded_weights_that_are_not_installed_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only the agent is set; the user role falls back to the embedded default model.
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAPPORT_MODELS", str(tmp_path / "models"))
    default = EMBEDDED_MODELS["qwen2.5-coder-1.5b"]
    absent = dataclasses.replace(default, distribution="rapport-absent-chunks-part{n}")
    monkeypatch.setitem(EMBEDDED_MODELS, default.name, absent)
    line = _one_line_exit_2(_scripted_run(tmp_path, "agent=scripted/auto"), capsys)
    assert "model role 'user'" in line and "not installed" in line
    assert not (tmp_path / "run").exists() and not (tmp_path / "models").exists()


def test_missing_weights_of_a_role_fail_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_HOME", str(tmp_path / "home"))
    gguf = tmp_path / "gone.gguf"
    argv = _scripted_run(tmp_path, "all=scripted/auto", f"user=llamacpp/{gguf}")
    line = _one_line_exit_2(argv, capsys)
    assert "model role 'user'" in line and "gone.gguf" in line
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    argv = _scripted_run(tmp_path, "all=scripted/auto", f"user=transformers/{checkpoint}")
    assert "no config.json" in _one_line_exit_2(argv, capsys)
    argv = _scripted_run(tmp_path, "all=scripted/auto", f"user=transformers/{tmp_path}/none")
    assert "does not exist" in _one_line_exit_2(argv, capsys)
    assert not (tmp_path / "run").exists()


# --- the cache key ---


async def test_answers_cached_for_one_endpoint_or_checkpoint_miss_another(
    tmp_path: Path,
) -> None:
    class Served(ModelAPI):
        name = "openai/m"

        def __init__(self, url: str) -> None:
            self.base_url = url
            self.calls = 0

        async def complete(self, request: Request) -> Completion:
            self.calls += 1
            return Completion(text=self.base_url)

    cache = InMemoryCache()
    hello = [Message(role="user", content="hi")]
    first, other = Served("http://127.0.0.1:1/v1"), Served("http://127.0.0.1:2/v1")
    assert (await Model(first, cache=cache).generate(hello)).text == first.base_url
    assert (await Model(first, cache=cache).generate(hello)).cached
    again = await Model(other, cache=cache).generate(hello)
    assert again.text == other.base_url and not again.cached

    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_bytes(b"one")

    class Local(ModelAPI):
        name = "transformers/ckpt"
        path = checkpoint

        async def complete(self, request: Request) -> Completion:
            raise AssertionError("not called")

    before = cache_identity(Local())
    with (checkpoint / "model.safetensors").open("r+b") as handle:
        handle.write(b"retrained, longer")  # rewritten in place: the folder's mtime stays
    assert cache_identity(Local()) != before
