"""One PrefIx session: the simulated user, the agent with system and interaction tools."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rapport.agents import Agent
from rapport.llm import Message, ModelError, ToolCall, ToolSpec
from rapport.log import ErrorEvent, Event, NoteEvent, ToolCallEvent, Turn
from rapport.memory import Memory, UserRef

from ._alignment import Step
from ._executor import SafeExecutor
from ._settings import control_tool_names, interaction_tool_names
from ._simulator import PreferenceLeak, UserSimulator, is_end

AGENT_STEPS = 8
"""Agent replies (tool rounds) per user message before the user is asked to go on."""
DEFERRED = "not run: a question to the person came first; re-issue it after reading the answer"


class SessionOver(Exception):
    """The user ended the session, the message limit was hit, or the simulator failed."""


@dataclass
class PrefixSession:
    """The mutable state of one session: transcript, agent and user views, the timeline."""

    executor: SafeExecutor
    simulator: UserSimulator
    agent: Agent
    memory: Memory
    user_ref: UserRef
    instructions: str
    memory_context: str
    tools: list[ToolSpec]
    max_messages: int
    turns: list[Turn] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    timeline: list[Step] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    user_view: list[Message] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    """What the user will see with the agent's next message (notices, activity)."""

    def _turn(self, speaker: Any, text: str, calls: list[ToolCall] | None = None) -> int:
        if len(self.turns) >= self.max_messages:
            raise SessionOver("message limit reached")
        self.turns.append(
            Turn(index=len(self.turns), speaker=speaker, text=text, tool_calls=calls or [])
        )
        return len(self.turns) - 1

    async def run(self) -> str:
        """Play the session to its end; returns why it stopped."""
        try:
            await self._user_says(await self._user_reply())
            while True:
                await self._agent_turn()
                reply = await self._user_reply()
                await self._user_says(reply)
        except SessionOver as stop:
            return str(stop)

    async def _user_reply(self) -> str:
        try:
            return await self.simulator.reply(self.user_view)
        except (PreferenceLeak, ModelError) as exc:
            self.events.append(
                ErrorEvent(turn=len(self.turns), where="user", message=str(exc)[:500])
            )
            raise SessionOver("user simulator failed") from exc

    async def _user_says(self, text: str) -> None:
        self._turn("user", text)
        self.user_view.append(Message(role="assistant", content=text))
        self.history.append(Message(role="user", content=text))
        if is_end(text):
            raise SessionOver("user ended")

    async def _agent_turn(self) -> None:
        for _step in range(AGENT_STEPS):
            recall = await self.memory.recall(self.user_ref, self.history)
            try:
                out = await self.agent.respond(
                    self.history,
                    instructions=self.instructions,
                    memory_context=self.memory_context,
                    recall=recall,
                    tools=self.tools,
                )
            except ModelError as exc:
                self.events.append(
                    ErrorEvent(turn=len(self.turns), where="agent", message=str(exc)[:500])
                )
                raise SessionOver("agent failed") from exc
            if not out.tool_calls:
                self._agent_text(out.text)
                return
            self._turn("agent", out.text, out.tool_calls)
            self.history.append(
                Message(role="assistant", content=out.text, tool_calls=out.tool_calls)
            )
            if out.text.strip():
                self.shown.append(out.text.strip())
            await self._run_calls(out.tool_calls)
        self._agent_text("")

    def _agent_text(self, text: str) -> None:
        self._turn("agent", text)
        self.history.append(Message(role="assistant", content=text))
        seen = "\n".join([*self.shown, text]).strip() or "(the assistant says nothing)"
        self.user_view.append(Message(role="user", content=seen))
        self.shown = []

    async def _run_calls(self, calls: list[ToolCall]) -> None:
        asked = False
        for call in calls:
            if asked:
                self._tool_result(call, DEFERRED, interaction=call.name in interaction_tool_names())
            elif call.name in control_tool_names():
                await self._control(call)
                asked = True
            elif call.name in interaction_tool_names():
                self._narrative(call)
            else:
                self._system(call)

    def _tool_result(
        self, call: ToolCall, result: str, *, interaction: bool, error: str | None = None
    ) -> None:
        index = self._turn("tool", result)
        self.history.append(
            Message(role="tool", content=result, tool_call_id=call.id, name=call.name)
        )
        self.events.append(
            ToolCallEvent(
                turn=index,
                name=call.name,
                arguments=call.arguments,
                result=result[:2000],
                error=error,
                interaction=interaction,
            )
        )

    def _system(self, call: ToolCall) -> None:
        done = self.executor.call(call.name, call.arguments)
        self.timeline.append(
            Step(name=call.name, interaction=False, wrote=done.wrote, failed=done.error is not None)
        )
        self.shown.append(f"[activity] the assistant ran {call.name}")
        self._tool_result(
            call, done.result or (done.error or ""), interaction=False, error=done.error
        )

    def _narrative(self, call: ToolCall) -> None:
        self.timeline.append(Step(name=call.name, interaction=True))
        self.shown.append(_message_of(call))
        self._tool_result(call, "shown to the person", interaction=True)

    async def _control(self, call: ToolCall) -> None:
        self.timeline.append(Step(name=call.name, interaction=True))
        question = "\n".join([*self.shown, _message_of(call)])
        self.shown = []
        self.user_view.append(Message(role="user", content=question))
        answer = await self._user_reply()
        self.user_view.append(Message(role="assistant", content=answer))
        self._tool_result(call, f"The person answered: {answer}", interaction=True)
        if is_end(answer):
            self.events.append(
                NoteEvent(turn=len(self.turns) - 1, text="user ended while answering")
            )
            raise SessionOver("user ended")


def _message_of(call: ToolCall) -> str:
    for key in ("question", "message"):
        if isinstance(call.arguments.get(key), str):
            return str(call.arguments[key])
    return json.dumps(call.arguments)[:500]
