"""`MPTBenchmark`: history sessions to learn from, then labelled tool-calling instances."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from rapport.llm import GenerateConfig, Message, ModelOutput, ModelRoles
from rapport.log import (
    Condition,
    ContextEvent,
    ExperimentConfig,
    RecallEvent,
    SessionInfo,
    SessionRecord,
    SessionSpec,
    Table,
    ToolCallEvent,
    UserSpec,
    render_sessions,
)

from .._protocol import AgentRequest, Benchmark, Episode, GenericSetting, SessionLog, paper_data
from ._agent import render_instructions
from ._dates import DateparserMissing, load_dateparser
from ._generate import CHALLENGES, GenerationSettings, generate_users
from ._metrics import METRICS, DateRule, instance_scores
from ._records import history_record, paraphrase_record, truth_text
from ._release import load_release
from ._report import report_tables
from ._schema import ApiSchema, arguments_model, domain_schema, schema_from_json, validate_call
from ._tokens import TOKEN_METHOD, TokenCounter, count_tokens
from ._tools import call_model, check_call, tools_instructions
from ._types import (
    MPTEvalOutcome,
    MPTEvalTask,
    MPTHistoryOutcome,
    MPTHistorySession,
    MPTHistoryTask,
    MPTInstance,
)

Challenge = Literal["recall", "induction", "transfer"]

RAG_TOP_K = 5
"""The RAG baseline's top-k in PRefine's code (its run scripts' ``RAG_TOP_K`` and exp7's
``RAGRuntime.top_k``); ``memory_options: {rag: {k: 6}}`` gives rag's own default."""


class MPTOptions(BaseModel):
    """Options of the ``mpt`` benchmark (``--option KEY=VALUE``; strings are coerced)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    drift: float = Field(default=0.2, ge=0.0, le=1.0)
    """Share of users who reverse one preference part-way (the latest behaviour is the truth)."""
    sessions_min: int = Field(default=5, ge=1, le=50)
    """Fewest history sessions per user."""
    sessions_max: int = Field(default=10, ge=1, le=50)
    """Most history sessions per user."""
    per_cell: int = Field(default=1, ge=0, le=10)
    """Eval instances per challenge x query type and user (at most 6 cells)."""
    challenges: list[Challenge] = Field(
        default_factory=lambda: list(get_args(Challenge)), min_length=1
    )
    """The challenges generated users get eval instances for (``recall,induction``: no
    transfer); the instances keep the generator's order."""
    max_eval: int | None = Field(default=None, ge=0)
    """Keep at most this many eval instances per user (None: all)."""
    paraphrase: bool = False
    """Rewrite the templated user turns with the ``user`` model (cached) before learning."""
    release: str | None = Field(
        default=None, json_schema_extra=paper_data("PRefine's released users, --release CHECKOUT")
    )
    """A checkout (or copy) of the public PRefine release: its users replace generated ones."""
    dataset: str = "mix600-v1"
    """The release's dataset config (``configs/datasets/<dataset>.json``)."""
    data: str | None = None
    """A file that replaces the config's source examples (e.g. a subset of them); its sha256
    and the expected counts are then not checked (a note in every instance says so)."""

    month_dates: bool = False
    """Score dates written with a month name (``March 5th``) as the same day in ``MM-DD``;
    PRefine's scorer leaves them as written, so they never match an ISO gold date."""
    dates: Literal["exp7", "dateparser"] = "exp7"
    """The date and time rule: ``exp7`` (the release's scorer, `normalize`) or
    ``dateparser`` (the paper-era scorer: values read by the dateparser package, installed
    with the ``mpt`` extra)."""

    @field_validator("challenges", mode="before")
    @classmethod
    def _split_challenges(cls, value: Any) -> Any:
        # ``--challenges recall,induction`` on the command line
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @property
    def date_rule(self) -> DateRule:
        """The rule `normalize` scores dates with."""
        if self.dates == "dateparser":
            return "dateparser"
        return "month_names" if self.month_dates else "exp7"

    @model_validator(mode="after")
    def _ordered(self) -> MPTOptions:
        if self.sessions_min > self.sessions_max:
            raise ValueError("sessions_min must not exceed sessions_max")
        if self.dates == "dateparser":
            if self.month_dates:
                raise ValueError("month_dates is for the exp7 rule; dateparser reads month names")
            try:
                load_dateparser()
            except DateparserMissing as exc:
                raise ValueError(str(exc)) from exc
        for key, value in (
            ("release", self.release),
            ("data", self.data),
            ("dataset", self.dataset),
        ):
            if value is not None and not value.strip():
                raise ValueError(f"{key} is empty: give a path or leave it out")
        if self.release is None:
            unused = [k for k in ("data", "dataset") if k in self.model_fields_set]
            if unused:
                raise ValueError(f"{unused[0]} reads the release: give release too")
        elif "challenges" in self.model_fields_set:
            raise ValueError("challenges applies to generated users: the release has its own")
        return self


class MPTUser(UserSpec):
    """A generated or loaded user; ``attributes["plan"]`` holds sessions and instances and
    ``attributes["truth"]`` its current preferences in words."""


class MPTBenchmark(Benchmark):
    """Personalized tool calling across sessions (MPT-style), with preference drift.

    Each user's history sessions come first (``split="train"``, learned from), then one
    session per evaluation instance (``split="eval"``, memory frozen).
    """

    name = "mpt"
    options_model = MPTOptions
    uses: ClassVar[frozenset[GenericSetting]] = frozenset({"users"})
    declared_metrics = METRICS
    produces = (MPTHistoryOutcome, MPTEvalOutcome)
    roles = ("user",)
    memory_defaults: ClassVar[dict[str, dict[str, Any]]] = {"rag": {"k": RAG_TOP_K}}

    def __init__(self, options: MPTOptions | None = None) -> None:
        self.options = options or MPTOptions()
        self._plans: list[dict[str, Any]] | None = None
        self._counters: dict[str, TokenCounter] = {}

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> MPTBenchmark:
        """Build from a config; ``config.options`` is validated into `MPTOptions`."""
        return cls(MPTOptions.model_validate(config.options))

    def _release_plans(self) -> list[dict[str, Any]]:
        if self._plans is None:
            o = self.options
            assert o.release is not None
            self._plans = load_release(o.release, o.dataset, o.data)
        return self._plans

    def default_users(self) -> int | None:
        """With a release, all of its examples; else the config's default."""
        return len(self._release_plans()) if self.options.release is not None else None

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """``n`` users: generated from ``seed``, or the release's first ``n`` examples."""
        o = self.options
        if o.release is not None:
            plans = self._release_plans()
            if n > len(plans):
                raise ValueError(f"--users {n}: the release data holds {len(plans)} examples")
            plans = plans[:n]
        else:
            settings = GenerationSettings(
                sessions_min=o.sessions_min,
                sessions_max=o.sessions_max,
                drift=o.drift,
                per_cell=o.per_cell,
                challenges=tuple(c for c in CHALLENGES if c in o.challenges),
            )
            plans = generate_users(n, seed, settings)
        return [self._user(plan) for plan in plans]

    def truth(self, user: UserSpec, condition: Condition) -> str:
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
        history = [MPTHistorySession.model_validate(h) for h in plan["history"]]
        text = render_sessions([history_record(user.id, h) for h in history])
        specs = [
            SessionSpec(
                id=f"{user.id}-h{h.index}",
                user_id=user.id,
                index=i,
                split="train",
                learn=True,
                task=MPTHistoryTask(session=h),
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
                task=MPTEvalTask(
                    instance=MPTInstance.model_validate(inst),
                    full_history_tokens=count_tokens(text),
                    history_text=text,
                    history=len(history),
                ),
            )
            for j, inst in enumerate(instances)
        ]
        return specs

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> Episode:
        """A replayed history session, or one evaluation instance answered with memory."""
        if isinstance(spec.task, MPTHistoryTask):
            return HistoryEpisode(spec, user.id, spec.task, models, self.options.paraphrase)
        task, rule = spec.task_as(MPTEvalTask), self.options.date_rule
        return InstanceEpisode(spec, task, self._counter(models), date_rule=rule)

    def _counter(self, models: ModelRoles) -> TokenCounter:
        """The token counter of the run's agent model (one per model, so each user's full
        history is counted once)."""
        spec = models.spec("agent")
        if spec not in self._counters:
            self._counters[spec] = TokenCounter(models.get("agent"))
        return self._counters[spec]

    def score(self, record: SessionRecord) -> dict[str, float]:
        """Per-instance P-EM, OA-F1 / F1 and their counts, validity and token cost."""
        outcome = record.outcome
        if not isinstance(outcome, MPTEvalOutcome):
            return {}
        schema = schema_from_json(outcome.api_schema)

        def allows(slot: str, value: Any) -> bool:
            return slot in schema.args and schema.args[slot].allows(value)

        context = outcome.context_tokens
        return instance_scores(
            outcome,
            allows,
            context_tokens=count_tokens(memory_text(record)) if context is None else context,
            dates=self.options.date_rule,
        )

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """The challenge x query type x method table and a per-method summary."""
        return report_tables(records)


def memory_text(record: SessionRecord) -> str:
    """What memory put in the agent's prompt: the session's context, then its recall."""
    context = [e.text for e in record.events_of(ContextEvent)]
    recall = [e.text for e in record.events_of(RecallEvent)]
    return "".join(context[-1:] + recall[-1:])


class HistoryEpisode(Episode):
    """An earlier session, replayed as written (its user turns reworded if asked)."""

    def __init__(
        self,
        spec: SessionSpec,
        user_id: str,
        task: MPTHistoryTask,
        models: ModelRoles,
        paraphrase: bool,
    ) -> None:
        self.spec, self.user_id, self.task = spec, user_id, task
        self.models, self.paraphrase = models, paraphrase
        self.info = SessionInfo(index=spec.index, benchmark="mpt", task=task.session.domain)

    async def start(self, log: SessionLog) -> None:
        replay = history_record(self.user_id, self.task.session, index=self.spec.index)
        if self.paraphrase:
            await paraphrase_record(replay, self.models)
        for turn in replay.turns:
            log.say(turn.speaker, turn.text, turn.tool_calls)
        for event in replay.events:
            log.event(event)
        self.done = True

    def request(self) -> AgentRequest:
        raise RuntimeError("a replayed history session asks the agent nothing")

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        raise RuntimeError("a replayed history session asks the agent nothing")

    def outcome(self) -> MPTHistoryOutcome:
        return MPTHistoryOutcome(domain=self.task.session.domain)


class InstanceEpisode(Episode):
    """One evaluation instance: the agent reads the request and writes one call.

    Generated instances name their target API; release instances show every function of the
    release's schema for the turn type and the agent chooses one.
    """

    def __init__(
        self,
        spec: SessionSpec,
        task: MPTEvalTask,
        counter: TokenCounter,
        *,
        date_rule: DateRule = "exp7",
    ) -> None:
        self.task, self.instance, self.counter = task, task.instance, counter
        self.date_rule = date_rule
        self.functions: list[dict[str, Any]] = list(self.instance.functions)
        self.schema = instance_schema(self.instance)
        self.dialogue = [
            Message(role="user" if u.role == "user" else "assistant", content=u.text)
            for u in self.instance.dialogue
        ]
        task_text = (
            f"{self.instance.domain}: choose among {len(self.functions)} functions"
            if self.functions
            else f"{self.schema.name}: {self.schema.description}"
        )
        self.info = SessionInfo(
            index=spec.index,
            benchmark="mpt",
            task=task_text,
        )
        self.predicted: dict[str, JsonValue] | None = None
        self.predicted_name: str | None = None
        self.problems = ["no call"]
        self.context_tokens: int | None = None
        # Counted again in `finish`; a session that ends before it keeps characters / 4.
        self.full_history_tokens = task.full_history_tokens
        self.token_method = TOKEN_METHOD

    async def start(self, log: SessionLog) -> None:
        for note in self.instance.notes:
            log.note(note)

    def request(self) -> AgentRequest:
        if self.functions:
            return AgentRequest(
                messages=list(self.dialogue),
                instructions=tools_instructions(self.functions),
                schema=call_model(self.functions),
                config=GenerateConfig(max_tokens=256),
            )
        return AgentRequest(
            messages=list(self.dialogue),
            instructions=render_instructions(self.schema),
            schema=arguments_model(self.schema),
            config=GenerateConfig(max_tokens=256),
        )

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        parsed = output.parsed.model_dump(exclude_none=True)
        if self.functions:
            self.predicted_name = str(parsed.get("function", ""))
            self.predicted = dict(parsed.get("arguments", {}))
            self.problems = check_call(self.functions, self.predicted_name, self.predicted)
        else:
            self.predicted = parsed
            self.problems = validate_call(self.schema, self.schema.name, self.predicted)
        log.event(
            ToolCallEvent(
                name=self.predicted_name or self.schema.name,
                arguments=self.predicted,
                error="; ".join(self.problems) or None,
            )
        )
        self.done = True

    async def finish(self, log: SessionLog) -> None:
        """Count what memory gave the agent and the user's whole history, with the agent
        model's tokenizer where it has one."""
        self.context_tokens, method = self.counter.count(memory_text(log.record))
        if self.task.history_text:
            self.full_history_tokens, _ = self.counter.count_kept(self.task.history_text)
        self.token_method = method

    def outcome(self) -> MPTEvalOutcome:
        inst = self.instance
        return MPTEvalOutcome(
            challenge=inst.challenge,
            query_type=inst.query_type,
            domain=inst.domain,
            variant=inst.variant,
            api_schema=self.schema.to_json(),
            predicted=self.predicted,
            predicted_name=self.predicted_name,
            valid=not self.problems,
            gold=inst.gold,
            allowed=inst.allowed,
            pref_slots=inst.pref_slots,
            pref_map=inst.pref_map,
            difficulty=inst.difficulty,
            focal_slots=inst.focal_slots,
            open_slots=inst.open_slots,
            history_sessions=self.task.history,
            full_history_tokens=self.full_history_tokens,
            context_tokens=self.context_tokens,
            token_method=self.token_method,
            date_rule=self.date_rule,
        )


def instance_schema(instance: MPTInstance) -> ApiSchema:
    """The target API of an instance (its stored schema for loaded data, the gold function's
    entry for release instances)."""
    for function in instance.functions:
        if function.get("name") == instance.gold.name:
            return _from_function(function)
    if instance.api_schema is not None:
        return schema_from_json(instance.api_schema, instance.domain)
    return domain_schema(instance.domain, instance.variant)


def _from_function(function: Mapping[str, Any]) -> ApiSchema:
    props = function.get("parameters", {}).get("properties", {})
    return schema_from_json(
        {
            "name": function["name"],
            "description": function.get("description", ""),
            "required": function.get("parameters", {}).get("required", []),
            "arguments": {
                name: {"kind": "text", "values": spec.get("enum", []), "description": name}
                for name, spec in props.items()
            },
        }
    )
