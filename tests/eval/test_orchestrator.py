"""One error policy for every session: where a failure happened is recorded, the run goes on.

A small probe benchmark uses every role (the user opens, the agent answers, a judge scores
in ``finish``) and a probe memory calls the ``memory`` model on recall; each case breaks one
of them, or raises from one step, in the second of three sessions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from rapport.envs import AgentRequest, Benchmark, Episode, SessionLog
from rapport.envs import _registry as benchmarks
from rapport.envs.gyms import GymOutcome
from rapport.eval import ExperimentError, one_line, prepare_experiment, run_experiment
from rapport.llm import (
    ContextFull,
    Message,
    ModelError,
    ModelOutput,
    ModelRoles,
    Request,
    ScriptedAPI,
)
from rapport.log import (
    Condition,
    ContextEvent,
    ErrorEvent,
    ExperimentConfig,
    GenericOutcome,
    GenericTask,
    RecallEvent,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    StopEvent,
    StopReason,
    UserRef,
    UserSpec,
)
from rapport.memory import MEMORIES, BaseMemory, MemoryOptions
from rapport.store import RunStore

BROKEN = 1
"""The session index where the fault strikes."""


class ProbeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    raise_in: str = ""
    """``start``, ``respond``, ``finish``, ``outcome``, ``score`` or "" (no exception)."""


class ProbeEpisode(Episode):
    def __init__(self, spec: SessionSpec, models: ModelRoles, raise_in: str) -> None:
        self.info = SessionInfo(index=spec.index, benchmark="probe")
        self.models, self.index = models, spec.index
        self.raise_in = raise_in if spec.index == BROKEN else ""

    def _maybe(self, step: str) -> None:
        if self.raise_in == step:
            raise KeyError(f"probe fault in {step}")

    async def start(self, log: SessionLog) -> None:
        self._maybe("start")
        opening = await self.models.get("user").generate([Message(role="user", content="hi")])
        log.say("user", opening.text)

    def request(self) -> AgentRequest:
        return AgentRequest(messages=[Message(role="user", content="hi")], instructions="Help.")

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        self._maybe("respond")
        log.say("agent", output.text)
        self.done = True

    async def finish(self, log: SessionLog) -> None:
        self._maybe("finish")
        await self.models.get("judge").generate([Message(role="user", content="score it")])

    def outcome(self) -> GenericOutcome:
        self._maybe("outcome")
        return GenericOutcome(kind="probe", data={"index": self.index})


class ProbeBenchmark(Benchmark):
    name = "probe"
    metrics = ("turns",)
    produces = (GenericOutcome,)

    def __init__(self, options: ProbeOptions) -> None:
        self.options = options

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        return cls(ProbeOptions.model_validate(config.options))

    def users(self, n: int, seed: int) -> list[UserSpec]:
        return [UserSpec(id=f"u{i}") for i in range(n)]

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        return [
            SessionSpec(id=f"s{i}", user_id=user.id, index=i, task=GenericTask(kind="probe"))
            for i in range(n)
        ]

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> ProbeEpisode:
        return ProbeEpisode(spec, models, self.options.raise_in)

    def score(self, record: SessionRecord) -> dict[str, float]:
        if self.options.raise_in == "score" and record.index == BROKEN:
            raise ZeroDivisionError("probe fault in score")
        return {"turns": float(len(record.turns))}


class ProbeMemory(BaseMemory):
    """Asks the memory model on every recall; can raise from context, recall or learn."""

    name = "probe_memory"

    class Options(MemoryOptions):
        raise_in: str = ""

    options: Options

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        self._maybe("context", session.index)
        self.index = session.index
        return "knows things"

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        self._maybe("recall", self.index)
        out = await self.models.get("memory").generate([Message(role="user", content="recall")])
        return out.text

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        self._maybe("learn", record.index)

    def _maybe(self, step: str, index: int) -> None:
        if self.options.raise_in == step and index == BROKEN:
            raise ValueError(f"probe fault in memory {step}")


class GymOnlyMemory(BaseMemory):
    name = "gym_only"
    requires = (GymOutcome,)


@pytest.fixture(autouse=True)
def _registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(benchmarks.BENCHMARKS, "probe", f"{__name__}:ProbeBenchmark")
    monkeypatch.setitem(MEMORIES, "probe_memory", f"{__name__}:ProbeMemory")
    monkeypatch.setitem(MEMORIES, "gym_only", f"{__name__}:GymOnlyMemory")


def _models(failing_role: str = "", error: type[ModelError] = ModelError) -> ModelRoles:
    calls: dict[str, int] = {}

    def api(role: str) -> ScriptedAPI:
        def reply(request: Request) -> str:
            calls[role] = calls.get(role, 0) + 1
            # Each role is called once per session here (recall once per agent call).
            if role == failing_role and calls[role] == BROKEN + 1:
                raise error(f"{role} server down")
            return f"{role} says ok"

        return ScriptedAPI(responder=reply, name=f"scripted/{role}")

    return ModelRoles({r: api(r) for r in ("agent", "user", "judge", "memory")})


async def _run(tmp_path: Path, models: ModelRoles, **options: Any) -> list[SessionRecord]:
    memory_options = {"probe_memory": {"raise_in": options.pop("memory_raise_in", "")}}
    config = ExperimentConfig(
        benchmark="probe",
        memory=["probe_memory"],
        users=1,
        sessions=3,
        run_dir=tmp_path,
        options=options,
        memory_options=memory_options,
    )
    result = await run_experiment(config, models=models, progress=False)
    assert result.sessions_run == 3, "the run goes on past the failure"
    with RunStore(tmp_path, create=False) as store:
        return store.sessions()


def _only_failure(records: list[SessionRecord]) -> Any:
    assert [r.status for r in records] == ["ok", "error", "ok"]
    [error] = records[BROKEN].events_of(ErrorEvent)
    assert all(not r.events_of(ErrorEvent) for i, r in enumerate(records) if i != BROKEN)
    return error


@pytest.mark.parametrize("role", ["agent", "user", "judge", "memory"])
async def test_a_model_error_in_any_role_is_recorded_at_that_role(
    role: str, tmp_path: Path
) -> None:
    error = _only_failure(await _run(tmp_path, _models(role)))
    assert error.where == role and error.error_type == "ModelError"
    assert f"{role} server down" in error.message


async def test_an_agent_past_its_context_ends_the_conversation_and_is_scored(
    tmp_path: Path,
) -> None:
    records = await _run(tmp_path, _models("agent", ContextFull))
    assert [r.status for r in records] == ["ok", "ok", "ok"]
    full = records[BROKEN]
    [stop] = full.events_of(StopEvent)
    assert stop.reason == StopReason.CONTEXT_FULL and stop.detail == "agent server down"
    assert [t.speaker for t in full.turns] == ["user"], "no agent turn after the refused call"
    assert "judge" in {c.role for c in full.usage}, "finish still ran"
    assert full.scores == {"turns": 1.0}
    assert not any(r.events_of(StopEvent) for i, r in enumerate(records) if i != BROKEN)


async def test_a_full_context_in_another_role_is_an_error(tmp_path: Path) -> None:
    error = _only_failure(await _run(tmp_path, _models("user", ContextFull)))
    assert error.where == "user" and error.error_type == "ContextFull"


@pytest.mark.parametrize(
    ("step", "where", "error_type"),
    [
        ("start", "benchmark", "KeyError"),
        ("respond", "benchmark", "KeyError"),
        ("finish", "benchmark", "KeyError"),
        ("outcome", "benchmark", "KeyError"),
        ("score", "score", "ZeroDivisionError"),
    ],
)
async def test_an_exception_in_the_benchmark_is_recorded_where_it_happened(
    step: str, where: str, error_type: str, tmp_path: Path
) -> None:
    records = await _run(tmp_path, _models(), raise_in=step)
    error = _only_failure(records)
    assert (error.where, error.error_type) == (where, error_type)
    assert "probe fault" in error.message


@pytest.mark.parametrize("step", ["context", "recall", "learn"])
async def test_an_exception_in_the_memory_is_recorded_where_it_happened(
    step: str, tmp_path: Path
) -> None:
    records = await _run(tmp_path, _models(), memory_raise_in=step)
    error = _only_failure(records)
    assert (error.where, error.error_type) == (f"memory.{step}", "ValueError")


async def test_context_and_recall_are_logged_for_every_session(tmp_path: Path) -> None:
    records = await _run(tmp_path, _models())
    for record in records:
        [context] = record.events_of(ContextEvent)
        [recall] = record.events_of(RecallEvent)
        assert context.text == "knows things" and recall.text == "memory says ok"
        assert recall.turn == 1 and record.turns[1].speaker == "agent"


def test_a_memory_that_needs_another_benchmarks_sessions_is_refused(tmp_path: Path) -> None:
    config = ExperimentConfig(benchmark="probe", memory=["gym_only"], run_dir=tmp_path / "r")
    with pytest.raises(ExperimentError, match=r"gym_only.*GymOutcome.*probe"):
        prepare_experiment(config, models=_models())
    assert not (tmp_path / "r").exists()


def test_an_unknown_memory_option_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    config = ExperimentConfig(
        benchmark="probe",
        memory=["probe_memory"],
        run_dir=tmp_path / "r",
        memory_options={"probe_memory": {"raise_inn": "learn"}},
    )
    with pytest.raises(ExperimentError, match=r"probe_memory.*raise_inn"):
        prepare_experiment(config, models=_models())
    assert not (tmp_path / "r").exists()


def test_one_line_gives_a_model_check_its_own_words() -> None:
    class Options(BaseModel):
        low: int = 0
        high: int = 0

        @field_validator("high")
        @classmethod
        def _small(cls, value: int) -> int:
            if value > 9:
                raise ValueError("high must be below 10")
            return value

        @model_validator(mode="after")
        def _ordered(self) -> Options:
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    with pytest.raises(ValidationError) as model_level:
        Options(low=2, high=1)
    assert one_line(model_level.value) == "Options: low must not exceed high"
    with pytest.raises(ValidationError) as field_level:
        Options(high=12)
    assert one_line(field_level.value) == "Options: high: high must be below 10"
