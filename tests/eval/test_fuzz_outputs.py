"""Hostile model output in every role each benchmark uses never aborts a run.

A scripted model answers like ``scripted/auto`` except in one role, where hypothesis draws
what it says: lone surrogates, JSON nested thousands of levels deep, megabytes of text,
nothing at all, tool arguments 3,000 levels deep. Each run must finish, commit every
session, and every failed session must say where, what type and why.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rapport.envs import benchmark_class
from rapport.eval import ExperimentConfig, run_experiment
from rapport.llm import Completion, ModelRoles, Request, ScriptedAPI, ToolCall
from rapport.llm._auto import auto_reply
from rapport.log import ErrorEvent
from rapport.store import RunStore

BENCHMARKS: dict[str, dict[str, object]] = {
    "scripted": {},
    "collab": {},
    "collab-ablation": {},
    "mpt": {},
    "prefix": {"settings": "each_confirmation,tool_medium", "max_messages": 24},
    "gym": {
        "env": "function,telepathy,turtle,intention,travel,persuade,search,tau",
        "train_episodes": 1,
        "eval_episodes": 1,
        "horizon": 4,
    },
}
# The agent, the roles the benchmark asks for, and the memory role (reflection's).
CASES = [
    (name, role)
    for name in BENCHMARKS
    for role in ("agent", *(benchmark_class(name).roles or ()), "memory")
]
TALLY: Counter[str] = Counter()


def _deep_json(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _deep_args(depth: int) -> dict[str, object]:
    root: dict[str, object] = {}
    node = root
    for _ in range(depth):
        child: dict[str, object] = {}
        node["a"] = child
        node = child
    return root


surrogate_text = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.characters(codec="utf-8"),
    ),
    max_size=40,
).map(lambda t: "ok \ud83d" + t)
hostile = st.one_of(
    surrogate_text,
    st.integers(1_000, 6_000).map(_deep_json),
    st.integers(1_000, 6_000).map(lambda n: "[" * n + "]" * n),
    st.integers(200_000, 400_000).map(lambda n: "x " * (n // 2)),
    st.just(""),
    st.integers(1_000, 3_000).map(lambda n: ("tool", n)),
)


def _responder(outputs: list[object]) -> Callable[[Request], object]:
    calls = iter(range(10**9))

    def reply(request: Request) -> object:
        out = outputs[next(calls) % len(outputs)]
        if isinstance(out, tuple):
            if not request.tools:
                return _deep_json(out[1])
            name = request.tools[0].name
            return Completion(
                tool_calls=[ToolCall(id="c", name=name, arguments=_deep_args(out[1]))]
            )
        if out == "auto":
            return auto_reply(request)
        return out

    return reply


@pytest.fixture(scope="module", autouse=True)
def _report_tally() -> Iterator[None]:
    yield
    line = "fuzz tally: " + json.dumps(dict(sorted(TALLY.items())))
    print(line, file=sys.__stderr__)


@pytest.mark.parametrize(("benchmark", "role"), CASES)
@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(outputs=st.lists(st.one_of(hostile, st.just("auto")), min_size=1, max_size=4))
async def test_hostile_output_in_any_role_is_recorded_and_the_run_goes_on(
    benchmark: str, role: str, outputs: list[object]
) -> None:
    with TemporaryDirectory() as tmp:
        generic = {"users": 1, "sessions": 2, "max_turns": 2}
        uses = benchmark_class(benchmark).uses
        config = ExperimentConfig.model_validate(
            {
                "benchmark": benchmark,
                "memory": ["reflection"],
                **{k: v for k, v in generic.items() if k in uses},
                "run_dir": Path(tmp),
                "options": BENCHMARKS[benchmark],
            }
        )
        models = ModelRoles(
            {
                "all": ScriptedAPI(responder=auto_reply, name="scripted/auto"),
                role: ScriptedAPI(responder=_responder(outputs), name="scripted/hostile"),
            }
        )
        TALLY["runs"] += 1
        try:
            result = await run_experiment(config, models=models, progress=False)
        except BaseException:
            TALLY["aborted"] += 1
            raise
        store = RunStore(Path(tmp), create=False)
        try:
            records = store.sessions()
        finally:
            store.close()
        assert result.sessions_run == len(records) > 0
        TALLY["sessions"] += len(records)
        for record in records:
            if record.status != "error":
                continue
            TALLY["error_sessions"] += 1
            errors = record.events_of(ErrorEvent)
            assert errors, f"{record.spec_id}: status error without an error event"
            assert all(e.where and e.error_type and e.message for e in errors)
            for e in errors:
                TALLY[f"where={e.where}"] += 1
