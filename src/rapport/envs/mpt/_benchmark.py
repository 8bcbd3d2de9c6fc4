"""`MPTBenchmark`: history sessions to learn from, then labelled tool-calling instances."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rapport.agents import Agent
from rapport.llm import Message, ModelError, ModelRoles, record_calls
from rapport.log import ErrorEvent, ExperimentConfig, RecallEvent, SessionRecord, ToolCallEvent
from rapport.memory import Memory, SessionInfo, UserRef, render_sessions

from .._protocol import Condition, SessionSpec, UserSpec
from ._agent import call_api
from ._generate import GenerationSettings, generate_users
from ._loader import load_official
from ._metrics import TOKEN_METHOD, count_tokens, instance_scores
from ._records import history_record, paraphrase_record, truth_text
from ._report import report_tables
from ._schema import ApiSchema, domain_schema, schema_from_json, validate_call


class MPTOptions(BaseModel):
    """Options of the ``mpt`` benchmark (``--option KEY=VALUE``; strings are coerced)."""

    model_config = ConfigDict(extra="forbid")

    drift: float = Field(default=0.2, ge=0.0, le=1.0)
    """Share of users who reverse one preference part-way (the latest behaviour is the truth)."""
    sessions_min: int = Field(default=5, ge=1, le=50)
    """Fewest history sessions per user."""
    sessions_max: int = Field(default=10, ge=1, le=50)
    """Most history sessions per user."""
    per_cell: int = Field(default=1, ge=0, le=10)
    """Eval instances per challenge x query type and user (at most 6 cells)."""
    max_eval: int | None = Field(default=None, ge=0)
    """Keep at most this many eval instances per user (None: all)."""
    paraphrase: bool = False
    """Rewrite the templated user turns with the ``user`` model (cached) before learning."""
    path: str | None = None
    """Load users from an official-format MPT JSON file instead of generating them."""

    @model_validator(mode="after")
    def _ordered(self) -> MPTOptions:
        if self.sessions_min > self.sessions_max:
            raise ValueError("sessions_min must not exceed sessions_max")
        return self


class MPTUser(UserSpec):
    """A generated or loaded user; ``attributes["plan"]`` holds sessions and instances."""

    def ref(self, truth: str = "") -> UserRef:
        return UserRef(id=self.id, truth=truth or str(self.attributes.get("truth", "")))


class MPTBenchmark:
    """Personalized tool calling across sessions (MPT-style), with preference drift.

    Each user's history sessions come first (``split="train"``, learned from), then one
    session per evaluation instance (``split="eval"``, memory frozen).
    """

    name = "mpt"
    metrics: ClassVar[list[str]] = ["p_em", "oa_f1", "f1", "token_ratio"]
    lower_is_better: ClassVar[frozenset[str]] = frozenset({"token_ratio"})

    def __init__(self, options: MPTOptions | None = None) -> None:
        self.options = options or MPTOptions()

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> MPTBenchmark:
        """Build from a config; ``config.options`` is validated into `MPTOptions`."""
        return cls(MPTOptions.model_validate(config.options))

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """``n`` users: generated from ``seed``, or the first ``n`` of the loaded file."""
        o = self.options
        if o.path:
            plans = load_official(o.path)[:n]
        else:
            settings = GenerationSettings(
                sessions_min=o.sessions_min,
                sessions_max=o.sessions_max,
                drift=o.drift,
                per_cell=o.per_cell,
            )
            plans = generate_users(n, seed, settings)
        return [self._user(plan) for plan in plans]

    def truth(self, user: UserSpec) -> str:
        """The user's current preferences in words (for the oracle memory)."""
        return str(user.attributes.get("truth", ""))

    @staticmethod
    def _user(plan: dict[str, Any]) -> MPTUser:
        return MPTUser(
            id=plan["id"],
            preferences=[f"{g}={o}" for g, o in plan["prefs"].items()],
            attributes={"plan": plan, "truth": truth_text(plan)},
        )

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """The user's history sessions then eval instances (``n`` and ``seed`` are unused:
        history length is part of the generated user, and instances are fixed by it)."""
        plan = user.attributes["plan"]
        history = plan["history"]
        full = count_tokens(render_sessions([history_record(user.id, h) for h in history]))
        specs = [
            SessionSpec(
                id=f"{user.id}-h{h['index']}",
                user_id=user.id,
                index=i,
                split="train",
                learn=True,
                task={"kind": "history", **h},
            )
            for i, h in enumerate(history)
        ]
        instances = plan["instances"][: self.options.max_eval]
        specs += [
            SessionSpec(
                id=inst["id"],
                user_id=user.id,
                index=len(history) + j,
                split="eval",
                learn=False,
                task={"kind": "eval", "full_history_tokens": full, "history": len(history), **inst},
            )
            for j, inst in enumerate(instances)
        ]
        return specs

    async def run_session(
        self,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        models: ModelRoles,
        *,
        condition: Condition,
    ) -> SessionRecord:
        """Replay a history session, or answer one evaluation instance with memory's help."""
        if spec.task["kind"] == "history":
            record = history_record(
                user.id, spec.task, condition=condition.name, spec_id=spec.id, index=spec.index
            )
            if self.options.paraphrase:
                await paraphrase_record(record, models)
            return record
        return await self._evaluate(spec, user, agent, memory, condition)

    async def _evaluate(
        self,
        spec: SessionSpec,
        user: UserSpec,
        agent: Agent,
        memory: Memory,
        condition: Condition,
    ) -> SessionRecord:
        task = spec.task
        schema = instance_schema(task)
        record = SessionRecord(
            condition=condition.name,
            user_id=user.id,
            index=spec.index,
            spec_id=spec.id,
            split="eval",
        )
        dialogue = [
            Message(role="user" if u["role"] == "user" else "assistant", content=u["text"])
            for u in task["dialogue"]
        ]
        with record_calls() as calls:
            context, recall = await _memory_text(memory, user.ref(), spec, schema, dialogue, record)
            predicted = await _predict(agent, schema, dialogue, context, recall, record)
        problems = (
            validate_call(schema, schema.name, predicted) if predicted is not None else ["no call"]
        )
        record.usage = list(calls)
        record.events.append(
            ToolCallEvent(
                name=schema.name, arguments=predicted or {}, error="; ".join(problems) or None
            )
        )
        record.outcome = _outcome(task, schema, predicted, problems, context + recall)
        record.outcome["agent_prompt_tokens"] = sum(
            c.prompt_tokens for c in record.usage if c.role == "agent"
        )
        record.outcome.update(peer_counts(memory, user.ref()))
        return record

    def score(self, record: SessionRecord) -> dict[str, float]:
        """Per-instance P-EM, OA-F1 / F1 and their counts, validity and token cost."""
        if record.outcome.get("kind") != "eval":
            return {}
        schema = schema_from_json(record.outcome["schema"])

        def allows(slot: str, value: Any) -> bool:
            return slot in schema.args and schema.args[slot].allows(value)

        return instance_scores(record.outcome, allows)

    def report_tables(self, records: list[SessionRecord]) -> list[Any]:
        """The challenge x query type x method table and a per-method summary."""
        return report_tables(records)


def _outcome(
    task: dict[str, Any],
    schema: ApiSchema,
    predicted: dict[str, Any] | None,
    problems: list[str],
    memory_text: str,
) -> dict[str, Any]:
    """What an eval session produced, with everything scoring needs (schema included)."""
    return {
        "kind": "eval",
        "challenge": task["challenge"],
        "query_type": task["query_type"],
        "domain": task["domain"],
        "variant": task.get("variant", False),
        "schema": schema.to_json(),
        "predicted": predicted,
        "valid": not problems,
        "gold": task["gold"],
        "pref_slots": task["pref_slots"],
        "focal_slots": task.get("focal_slots", []),
        "open_slots": task["open_slots"],
        "history_sessions": task.get("history", 0),
        "context_tokens": count_tokens(memory_text),
        "full_history_tokens": task.get("full_history_tokens", 0),
        "token_method": TOKEN_METHOD,
    }


def peer_counts(memory: Memory, ref: UserRef) -> dict[str, Any]:
    """A memory's learning calls, failures and empty extractions for this user so far.

    Memories that count their failed calls instead of raising expose `failure_counts`
    (the mem0 and langmem peers, prefine); other memories give nothing.
    """
    counts = getattr(memory, "failure_counts", None)
    if not callable(counts):
        return {}
    got = counts(ref)
    calls, failures = int(got.get("calls", 0)), int(got.get("failures", 0))
    return {
        "memory_calls": calls,
        "memory_failures": failures,
        "memory_empty": int(got.get("empty", 0)),
        "memory_failure_rate": failures / calls if calls else 0.0,
    }


def instance_schema(task: dict[str, Any]) -> ApiSchema:
    """The target API of an instance (its stored schema for loaded data)."""
    if "schema" in task:
        return schema_from_json(task["schema"], task.get("domain", ""))
    return domain_schema(task["domain"], bool(task.get("variant", False)))


async def _memory_text(
    memory: Memory,
    ref: UserRef,
    spec: SessionSpec,
    schema: ApiSchema,
    dialogue: list[Message],
    record: SessionRecord,
) -> tuple[str, str]:
    info = SessionInfo(
        index=spec.index,
        benchmark="mpt",
        task=f"{schema.name}: {schema.description}",
        attributes={"domain": spec.task["domain"], "schema": schema.to_json()},
    )
    try:
        context = await memory.context(ref, info)
        recall = await memory.recall(ref, dialogue)
    except Exception as exc:  # a failing memory must not end the run
        record.events.append(ErrorEvent(where="memory", message=f"{type(exc).__name__}: {exc}"))
        return "", ""
    if recall:
        record.events.append(RecallEvent(text=recall))
    return context, recall


async def _predict(
    agent: Agent,
    schema: ApiSchema,
    dialogue: list[Message],
    context: str,
    recall: str,
    record: SessionRecord,
) -> dict[str, Any] | None:
    try:
        return await call_api(agent, schema, dialogue, memory_context=context, recall=recall)
    except ModelError as exc:
        record.status = "error"
        record.events.append(ErrorEvent(where="agent", message=str(exc)[:500]))
        return None
