"""One PrefIx session as an episode: the simulated user and the executed tools' side of it.

The agent may take several tool rounds per user message (`AGENT_STEPS` at most); system
tools run on bfcl's backends, narrative interaction tools are shown to the user with the
agent's next message, and a control tool (a question or a confirmation) gets the user's
answer at once. After the conversation the judges score the transcript.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rapport.judges import JudgeResult, MultiJudge
from rapport.llm import Message, ModelOutput, ModelRoles, ToolCall, ToolSpec
from rapport.log import NoteEvent, SessionInfo, Speaker, StopReason, ToolCallEvent, UserGuardEvent

from .._protocol import AgentRequest, Episode, SessionFailure, SessionLog
from ._alignment import Step, align
from ._checker import Matching, check_accuracy
from ._coarsen import coarsen
from ._dimension_judge import PAPER_TEMPERATURE, PAPER_WINDOW, DimensionJudge
from ._executor import SafeExecutor
from ._failures import FailurePlan
from ._prompts import agent_instructions
from ._rubric import JudgeRubric, own_rubric
from ._settings import (
    InteractionTool,
    Setting,
    control_tool_names,
    function_name,
    get_tool,
    interaction_tool_names,
    interaction_tools,
    split_items,
)
from ._simulator import DONE, GO_ON, PreferenceLeak, PrefixUserSimulator, is_end
from ._task_data import TaskData, installed_task_data
from ._tasks import BfclTask
from ._transcript import JUDGE_WINDOW, render_for_judge
from ._types import PrefixOutcome, SettingAlignment

AGENT_STEPS = 8
"""Agent replies (tool rounds) per user message before the user is asked to go on."""
DEFERRED = "not run: a question to the person came first; re-issue it after reading the answer"
COARSENED_BY_MODEL = "coarsened by the user model"
USER_REPLACED = "user message written by code (every attempt spoke as the assistant)"


class _Over(Exception):
    """The user ended the session or the message limit was reached."""

    def __init__(self, reason: StopReason, detail: str = "") -> None:
        super().__init__(detail or reason.value)
        self.reason, self.detail = reason, detail


@dataclass
class Plan:
    """What a session plays: the candidate tasks and everything fixed before it starts."""

    candidates: list[BfclTask]
    """The chosen task, then its stand-ins for when coarsening must drop it."""
    settings: list[Setting]
    prompting: str
    """``p`` (the agent's prompt names the preferences) or ``no_p``."""
    max_messages: int
    judge_repeats: int
    judge_key: str
    failures: FailurePlan | None = None
    reliability: str = "repeats"
    result_chars: int | None = None
    """Longest system-tool result the agent reads (None: whole, as bfcl-eval)."""
    task_data: TaskData = field(default_factory=installed_task_data)
    """Where the tasks come from (their function docs too)."""
    instruction: str | None = None
    """The task's coarse instruction when it comes fixed (the paper's); None: coarsen."""
    instruction_source: str = COARSENED_BY_MODEL
    """Where the instruction comes from, in words (for the report)."""
    rubric: JudgeRubric = field(default_factory=own_rubric)
    """What the UX judges score and are told (ours, or the paper's from a checkout)."""
    judge_chars: int | None = None
    """Characters of the transcript the judges read (None: the whole log, cut to
    `JUDGE_WINDOW` only when it is past a judge's context)."""
    matching: Matching = "prefix"
    """How accuracy matches calls: PrefIX's normalised strings or rapport's canonical."""
    judging: str = "per_dimension"
    """``per_dimension`` (the paper's: one call per dimension, head/tail window) or
    ``all_at_once`` (ours: one call for every dimension)."""
    judge_temperature: float = PAPER_TEMPERATURE
    """Temperature of every per-dimension judge call."""


class PrefixEpisode(Episode):
    """Plays one task for one user holding interaction preferences.

    Args:
        plan: the task candidates, settings and limits.
        index: the session's position in the user's sequence.
        models: the run's roles (``user`` simulates and coarsens; judges score).
        failures_for: the failure plan for the task actually played.
    """

    def __init__(
        self,
        plan: Plan,
        index: int,
        models: ModelRoles,
        failures_for: Callable[[Sequence[Setting], BfclTask], FailurePlan],
    ) -> None:
        self.plan, self.index, self.models = plan, index, models
        self.failures_for = failures_for
        self.task = plan.candidates[0]
        self.dropped = False
        self.instruction = ""
        self.failures = FailurePlan()
        self.executor: SafeExecutor | None = None
        self.simulator: PrefixUserSimulator | None = None
        self.tools: list[ToolSpec] = []
        self.timeline: list[Step] = []
        self.history: list[Message] = []
        self.user_view: list[Message] = []
        self.shown: list[str] = []
        """What the user will see with the agent's next message (notices, activity)."""
        self.steps = 0
        self.acted = False
        """Whether the agent ran a system tool since the user's last message."""
        self.replies = 0
        self.turn = -1
        """The conversation's turn: one per user message (answers to questions excluded)."""
        """Agent replies with tool calls so far (calls of one reply share its number)."""

    @property
    def info(self) -> SessionInfo:  # type: ignore[override]
        """The task's API classes (those of the stand-in, when one replaced the task)."""
        classes = ", ".join(self.task.involved_classes)
        return SessionInfo(index=self.index, benchmark="prefix", task=classes)

    async def start(self, log: SessionLog) -> None:
        if not await self._coarsen(log):
            self.dropped, self.done = True, True
            return
        self.failures = self.failures_for(self.plan.settings, self.task)
        self.executor = SafeExecutor(self.task, failures=self.failures)
        self.simulator = PrefixUserSimulator(
            self.models.get("user"), self.plan.settings, self.instruction
        )
        try:
            self._user_says(log, await self._user_reply(log))
        except _Over as stop:
            self._stop(log, stop)

    async def _coarsen(self, log: SessionLog) -> bool:
        if self.plan.instruction is not None:
            self.task, self.instruction = self.plan.candidates[0], self.plan.instruction
            return True
        for task in self.plan.candidates:
            coarse = await coarsen(task, self.models.get("user"))
            if coarse.instruction is not None:
                self.task, self.instruction = task, coarse.instruction
                return True
            log.note(coarse.reason)
        return False

    def request(self) -> AgentRequest:
        return AgentRequest(
            messages=list(self.history),
            instructions=agent_instructions(self.plan.prompting, self.plan.settings),
            tools=self.tools,
        )

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        try:
            if output.tool_calls:
                self._say(log, "agent", output.text, output.tool_calls)
                self.history.append(
                    Message(role="assistant", content=output.text, tool_calls=output.tool_calls)
                )
                if output.text.strip():
                    self.shown.append(output.text.strip())
                self.replies += 1
                await self._run_calls(log, output.tool_calls)
                self.steps += 1
                if self.steps < AGENT_STEPS:
                    return
                self._agent_text(log, "")
            else:
                self._agent_text(log, output.text)
            self.steps = 0
            self._user_says(log, await self._user_reply(log))
        except _Over as stop:
            self._stop(log, stop)

    async def finish(self, log: SessionLog) -> None:
        """The judges score the transcript on every UX dimension.

        Raises:
            SessionFailure: a judge's call failed (its output stayed invalid, its server
                was down): the session is an error at that judge's role, like any model.
        """
        if self.dropped:
            return
        plan = self.plan
        if plan.judging == "per_dimension":
            per_dimension = DimensionJudge(
                plan.rubric.dimensions,
                plan.rubric.dimension_template(),
                runs=plan.judge_repeats,
                max_chars=plan.judge_chars or PAPER_WINDOW,
                temperature=plan.judge_temperature,
            )
            persona = plan.rubric.persona(plan.settings)
            key = plan.judge_key
            self._record_judged(
                log, await per_dimension.score(self.models, log.record.turns, persona, key=key)
            )
            return
        judge = MultiJudge(
            plan.rubric.dimensions,
            plan.rubric.instructions(plan.settings),
            repeats=plan.judge_repeats,
        )
        result = await self._judged(judge, log, plan.judge_chars)
        if plan.judge_chars is None and any(e.error_type == "ContextFull" for e in result.errors):
            log.event(
                NoteEvent(
                    text="the whole log is past a judge's context: the judges read its first "
                    f"turns and as many of the last as fit in {JUDGE_WINDOW} characters"
                )
            )
            result = await self._judged(judge, log, JUDGE_WINDOW)
        self._record_judged(log, result)

    @staticmethod
    def _record_judged(log: SessionLog, result: JudgeResult) -> None:
        """The judges' scores as events; a failed judge call fails the session.

        Raises:
            SessionFailure: a judge's call failed.
        """
        for event in result.events():
            log.event(event)
        if result.errors:
            first, *others = result.errors
            for error in others:
                log.event(error)
            raise SessionFailure(first.where, first.message, error_type=first.error_type)

    async def _judged(self, judge: MultiJudge, log: SessionLog, chars: int | None) -> JudgeResult:
        transcript, turn_ids = render_for_judge(
            log.record.turns, self.plan.settings, self.instruction, max_chars=chars
        )
        return await judge.score(self.models, transcript, turn_ids, key=self.plan.judge_key)

    def outcome(self) -> PrefixOutcome:
        names = [s.id for s in self.plan.settings]
        sources = {
            "task_data": self.plan.task_data.label,
            "instruction_source": self.plan.instruction_source,
        }
        if self.dropped or self.executor is None:
            return PrefixOutcome(
                task_id=self.task.id, settings=names, dropped=self.dropped, **sources
            )
        accuracy = check_accuracy(self.task, self.executor, self.plan.matching)
        alignment = [
            SettingAlignment(
                setting=s.id, dimension=s.dimension, **align(s, self.timeline).model_dump()
            )
            for s in self.plan.settings
        ]
        return PrefixOutcome(
            task_id=self.task.id,
            settings=names,
            instruction=self.instruction,
            failures=self.failures.targets,
            accuracy=accuracy,
            alignment=alignment,
            calls=list(self.executor.log),
            judge_runs=self.plan.judge_repeats,
            reliability=self.plan.reliability,
            rubric=self.plan.rubric.source,
            **sources,
        )

    def _stop(self, log: SessionLog, over: _Over) -> None:
        log.stop(over.reason, over.detail)
        self.done = True

    def _say(
        self, log: SessionLog, speaker: Speaker, text: str, calls: Sequence[ToolCall] = ()
    ) -> int:
        if log.next_turn >= self.plan.max_messages:
            raise _Over(StopReason.MESSAGE_CAP, f"{self.plan.max_messages} messages")
        return log.say(speaker, text, list(calls))

    async def _user_reply(self, log: SessionLog, *, answer: bool = False) -> str:
        """The user's message; `answer`: it answers a question the agent asked."""
        assert self.simulator is not None
        replaced = self.simulator.replaced
        # A user model that cannot stay in role after an agent that only talked has
        # nothing left to ask for: code ends the session rather than urge it on forever.
        instead = GO_ON if answer or self.acted else DONE
        try:
            text = await self.simulator.reply(self.user_view, instead=instead)
        except PreferenceLeak as exc:
            raise SessionFailure("user", str(exc)[:500], error_type="PreferenceLeak") from exc
        if self.simulator.replaced > replaced:
            log.event(UserGuardEvent(turn=log.next_turn, reason=f"{USER_REPLACED}: {text[:80]}"))
        return text

    def _user_says(self, log: SessionLog, text: str) -> None:
        self._say(log, "user", text)
        self.acted = False
        self._next_turn()
        self.user_view.append(Message(role="assistant", content=text))
        self.history.append(Message(role="user", content=text))
        if is_end(text):
            raise _Over(StopReason.USER_ENDED)

    def _next_turn(self) -> None:
        """A new user message opens a turn: calls are tagged with it, and functions held
        back until it become available."""
        assert self.executor is not None
        self.turn += 1
        self.executor.turn = self.turn
        interaction = [t.spec() for t in interaction_tools()]
        self.tools = [*self.plan.task_data.tools(self.task, self.turn), *interaction]

    def _agent_text(self, log: SessionLog, text: str) -> None:
        self._say(log, "agent", text)
        self.history.append(Message(role="assistant", content=text))
        seen = "\n".join([*self.shown, text]).strip() or "(the assistant says nothing)"
        self.user_view.append(Message(role="user", content=seen))
        self.shown = []

    async def _run_calls(self, log: SessionLog, calls: Sequence[ToolCall]) -> None:
        asked = False
        for call in calls:
            if asked:
                interaction = call.name in interaction_tool_names()
                self._tool_result(log, call, DEFERRED, interaction=interaction)
            elif call.name in interaction_tool_names() and (problem := self._invalid(call)):
                self._tool_result(log, call, problem, interaction=True, error=problem)
            elif call.name in control_tool_names():
                await self._control(log, call)
                asked = True
            elif call.name in interaction_tool_names():
                self._narrative(log, call)
            else:
                self._system(log, call)

    def _tool_result(
        self,
        log: SessionLog,
        call: ToolCall,
        result: str,
        *,
        interaction: bool,
        error: str | None = None,
    ) -> None:
        index = self._say(log, "tool", result)
        self.history.append(
            Message(role="tool", content=result, tool_call_id=call.id, name=call.name)
        )
        log.event(
            ToolCallEvent(
                turn=index,
                name=call.name,
                arguments=call.arguments,
                result=result[:2000],
                error=error,
                interaction=interaction,
            )
        )

    def _invalid(self, call: ToolCall) -> str | None:
        """Why an interaction call's fields are invalid (None: valid); it is then not run."""
        functions = {t.name for t in self.tools} - interaction_tool_names()
        problem = get_tool(call.name).validate_call(dict(call.arguments), functions)
        return f"Invalid {call.name} call: {problem}" if problem else None

    def _interaction_step(self, call: ToolCall) -> Step:
        function = str(call.arguments.get("execution_function", "")).strip()
        names = call.arguments.get("param_names")
        return Step(
            name=call.name,
            interaction=True,
            function=function_name(function) if function else None,
            params=split_items(names) if isinstance(names, str) else None,
            reply=self.replies,
        )

    def _system(self, log: SessionLog, call: ToolCall) -> None:
        assert self.executor is not None
        done = self.executor.call(call.name, call.arguments)
        self.acted = True
        self.timeline.append(
            Step(
                name=call.name,
                interaction=False,
                wrote=done.wrote,
                failed=done.error is not None,
                params=sorted(call.arguments),
                reply=self.replies,
            )
        )
        self.shown.append(f"[activity] the assistant ran {call.name}")
        result = cut(done.result or (done.error or ""), self.plan.result_chars)
        self._tool_result(log, call, result, interaction=False, error=done.error)

    def _narrative(self, log: SessionLog, call: ToolCall) -> None:
        self.timeline.append(self._interaction_step(call))
        self.shown.append(_message_of(call))
        self._tool_result(log, call, "shown to the person", interaction=True)

    async def _control(self, log: SessionLog, call: ToolCall) -> None:
        self.timeline.append(self._interaction_step(call))
        question = "\n".join([*self.shown, _message_of(call)])
        self.shown = []
        self.user_view.append(Message(role="user", content=question))
        answer = await self._user_reply(log, answer=True)
        self.user_view.append(Message(role="assistant", content=answer))
        self._tool_result(log, call, f"The person answered: {answer}", interaction=True)
        if is_end(answer):
            raise _Over(StopReason.USER_ENDED, "while answering a question")


def cut(text: str, limit: int | None) -> str:
    """A tool result cut to ``limit`` characters, saying how much was left out."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


def _message_of(call: ToolCall) -> str:
    """What the person sees of an interaction call: its content, else its fields."""
    content = call.arguments.get("content")
    if isinstance(content, str) and content.strip():
        return content.strip()[:1000]
    tool: InteractionTool = get_tool(call.name)
    parts = [
        f"{name.replace('_', ' ')}: {call.arguments[name]}"
        for name in tool.fields
        if isinstance(call.arguments.get(name), str) and call.arguments[name].strip()
    ]
    return ("; ".join(parts) or json.dumps(call.arguments))[:1000]
