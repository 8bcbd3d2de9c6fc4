"""The MPT report's cost tables, from a scripted run through the experiment runner: the
inference context against the full history, and how often memories' calls failed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rapport.envs.mpt import MPTEvalOutcome
from rapport.envs.mpt._costs import cost_tables, failure_rows
from rapport.eval import prepare_experiment
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import ErrorEvent, ExperimentConfig, MemoryHealth, SessionRecord
from rapport.report import Report, build_report, render_text
from rapport.store import RunStore

HYPOTHESIS = "keeps costs low"
CONTEXT = f"Preferences: {HYPOTHESIS}."  # what prefine gives the agent at inference
VERDICT = {"support": True, "abstraction": True, "actionable": True, "temporal": True}


def respond(request: Request) -> str:
    """PRefine accepts one hypothesis (its generator breaks on every 3rd session); the agent
    answers with no arguments."""
    title = request.json_schema["title"] if request.json_schema else ""
    if title == "HypothesisSet":
        if any("## Session 3 " in m.content for m in request.messages):  # retries too
            return "not json"
        return json.dumps({"hypotheses": [{"text": HYPOTHESIS, "level": "domain", "support": 2}]})
    if title == "VerdictSet":
        return json.dumps({"verdicts": [{"index": 0, **VERDICT}]})
    return "{}"


class FakeMem0:
    """mem0's client: every 4th ``add`` fails, the one after keeps nothing; the first
    ``search`` fails."""

    def __init__(self) -> None:
        self.adds = self.searches = 0

    def add(self, messages: list[dict[str, str]], user_id: str) -> dict[str, Any]:
        self.adds += 1
        if self.adds % 4 == 0:
            raise ValueError("the model's JSON did not parse")
        if self.adds % 4 == 1:
            return {"results": []}
        return {"results": [{"id": str(self.adds), "memory": "likes cheap options"}]}

    def get_all(self, filters: dict[str, str]) -> dict[str, Any]:
        return {"results": [{"id": "1", "memory": "likes cheap options"}]}

    def search(self, query: str, top_k: int, filters: dict[str, str]) -> dict[str, Any]:
        self.searches += 1
        if self.searches == 1:
            raise ValueError("bad tool call")
        return {"results": [{"memory": "likes cheap options"}]}


class FakeManager:
    """langmem's memory manager: the 2nd of every 4 calls fails, the 3rd extracts nothing."""

    def __init__(self) -> None:
        self.calls = 0

    async def ainvoke(self, payload: dict[str, Any]) -> list[Any]:
        self.calls += 1
        if self.calls % 4 == 2:
            raise ValueError("tool call arguments are not valid JSON")
        if self.calls % 4 == 3:
            return []
        memory = SimpleNamespace(content="likes cheap options")
        return [SimpleNamespace(id=f"m{self.calls}", content=memory)]


async def _run(run_dir: Path) -> Report:
    config = ExperimentConfig(
        benchmark="mpt",
        memory=["none", "full_history", "prefine", "mem0", "langmem"],
        users=2,
        seed=3,
        run_dir=run_dir,
        options={"sessions_min": 8, "sessions_max": 8, "max_eval": 2},
        cache=False,
    )
    experiment = prepare_experiment(
        config, models=ModelRoles({"all": ScriptedAPI(responder=respond)})
    )
    experiment.memories["mem0"]._client = FakeMem0()  # type: ignore[attr-defined]
    experiment.memories["langmem"]._manager = FakeManager()  # type: ignore[attr-defined]
    await experiment.run(progress=False)
    return build_report(run_dir)


def _table(report: Report, title: str) -> dict[str, dict[str, Any]]:
    [table] = [t for t in report.tables if t.title.startswith(title)]
    return {str(row[0]): dict(zip(table.columns, row, strict=True)) for row in table.rows}


async def test_cost_tables_from_a_scripted_run(tmp_path: Path) -> None:
    report = await _run(tmp_path)
    _check_failures(_table(report, "MPT: memory failures"))
    _check_tokens(tmp_path, _table(report, "MPT: inference context vs full history"))
    text = render_text(report)
    assert "MPT: memory failures" in text and "MPT: inference context vs full history" in text


def _check_failures(rows: dict[str, dict[str, Any]]) -> None:
    # 2 users x 8 history sessions learned; mem0 also searches once per eval instance (2 x 2).
    assert set(rows) == {"prefine", "mem0", "langmem"}  # none and full_history count nothing
    mem0, langmem, prefine = rows["mem0"], rows["langmem"], rows["prefine"]
    assert (mem0["users"], mem0["calls"], mem0["failed calls"]) == (2, 20, 5)
    assert (mem0["failure rate"], mem0["empty extractions"]) == ("25.00%", 4)
    assert (langmem["calls"], langmem["failed calls"], langmem["empty extractions"]) == (16, 4, 4)
    assert langmem["failure rate"] == "25.00%"
    assert (prefine["calls"], prefine["failed calls"], prefine["failure rate"]) == (16, 2, "12.50%")
    assert all(row["raised errors"] == 0 for row in rows.values())


def _check_tokens(run_dir: Path, rows: dict[str, dict[str, Any]]) -> None:
    with RunStore(run_dir, create=False) as store:
        evals = [r for r in store.sessions() if r.split == "eval"]
    assert len(evals) == 5 * 2 * 2
    for record in evals:  # every eval session records what the token table needs
        assert isinstance(record.outcome, MPTEvalOutcome)
        assert record.outcome.history_sessions == 8
        assert record.outcome.full_history_tokens > 0
        assert sum(c.prompt_tokens for c in record.usage if c.role == "agent") > 0
    full = [
        r.outcome.full_history_tokens
        for r in evals
        if r.condition == "prefine" and isinstance(r.outcome, MPTEvalOutcome)
    ]
    context = math.ceil(len(CONTEXT) / 4)
    prefine = rows["prefine"]
    assert prefine["context tokens (mean)"] == f"{context:.1f}"
    assert prefine["context / full"] == f"{100 * context * len(full) / sum(full):.2f}%"
    assert prefine["n (>=8 sessions)"] == 4
    assert float(prefine["context / full (>=8)"].rstrip("%")) < 2.0
    assert rows["full_history"]["context / full"] == "100.00%"
    assert rows["none"]["context tokens (mean)"] == "0.0"
    assert rows["none"]["context / full"] == "0.00%"


def test_no_failure_table_without_counting_memories() -> None:
    titles = [title for title, _, _ in cost_tables([])]
    assert titles == [
        "MPT: inference context vs full history (tokens: approx: ceil(characters / 4))"
    ]


def test_failure_rows_sum_each_users_latest_counts_and_raised_errors() -> None:
    def record(user: str, index: int, calls: int, failures: int, empty: int) -> SessionRecord:
        return SessionRecord(
            condition="mem0",
            user_id=user,
            index=index,
            spec_id=f"{user}-{index}",
            split="eval",
            outcome=MPTEvalOutcome(challenge="recall", query_type="context-free", domain="x"),
            memory_health=MemoryHealth(calls=calls, failures=failures, empty=empty),
        )

    missing = SessionRecord(
        condition="langmem",
        user_id="a",
        index=0,
        spec_id="a-0",
        events=[ErrorEvent(where="memory.learn", message="ImportError: langmem")] * 2,
    )
    records = [record("a", 8, 9, 2, 1), record("a", 9, 10, 3, 1), record("b", 8, 9, 0, 4)]
    rows = {row[0]: row for row in failure_rows([*records, missing])}
    assert rows["mem0"] == ["mem0", 2, 19, 3, "15.79%", 5, 0]
    assert rows["langmem"] == ["langmem", "-", "-", "-", "-", "-", 2]
