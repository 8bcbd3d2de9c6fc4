"""The agent under test: instructions + what memory says + the conversation -> a reply."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from rapport.llm import GenerateConfig, Message, Model, ModelOutput, TextSink, ToolSpec

RecallPlacement = Literal["turn", "system", "first"]
NOTES = "Notes relevant right now:\n"
CONTEXT = "## What you know about this user\n"


class Agent:
    """Wraps the ``agent`` model; benchmarks supply task instructions and tools.

    The system prompt is the benchmark's instructions, then the memory's session context
    under its own heading, so memory methods are compared on equal footing. This turn's
    recall goes in a system message after the conversation by default (``turn``), so the
    prompt prefix stays the same from turn to turn and the engine can reuse its KV cache;
    ``system`` puts it in the system prompt after the session context instead. The session
    context goes in the system prompt by default; ``context_in="turn"`` moves it, under the
    same heading, into that message after the conversation, next to the latest message.
    ``recall_in="first"`` puts the recall, as the memory wrote it, before the text of the
    conversation's first message (MultiSessionCollab prepends its picked notes to the agent's
    greeting); with no conversation yet it goes after the conversation as with ``turn``.
    """

    def __init__(self, model: Model, on_text: TextSink | None = None) -> None:
        self.model = model
        self.on_text = on_text
        """Where a plain-text reply's pieces go while it is generated (a page that shows it
        as it comes); structured replies come whole."""

    @staticmethod
    def system_prompt(
        instructions: str,
        memory_context: str = "",
        context_template: Callable[[str], str] | None = None,
    ) -> str:
        """The instructions, then memory's context under its heading; with
        `context_template`, the benchmark's own prompt with the context in it instead."""
        if memory_context.strip() and context_template is not None:
            return context_template(memory_context.strip()).strip()
        parts = [instructions.strip()]
        if memory_context.strip():
            parts.append(CONTEXT + memory_context.strip())
        return "\n\n".join(parts)

    @staticmethod
    def messages(
        history: list[Message],
        *,
        instructions: str,
        memory_context: str = "",
        recall: str = "",
        recall_in: RecallPlacement = "turn",
        context_in: RecallPlacement = "system",
        context_template: Callable[[str], str] | None = None,
        first_join: str = "\n\n",
    ) -> list[Message]:
        """The full prompt: system prompt, the conversation, then this turn's recall."""
        context, notes = memory_context.strip(), recall.strip()
        if notes and recall_in == "first" and history and context_in == "system":
            content = f"{recall}{first_join}{history[0].content}"
            first = history[0].model_copy(update={"content": content})
            history, notes = [first, *history[1:]], ""
        notes = NOTES + notes if notes else ""
        if context_in == "turn" and context:
            near = "\n\n".join(part for part in (CONTEXT + context, notes) if part)
            system = Message(role="system", content=Agent.system_prompt(instructions))
            return [system, *history, Message(role="system", content=near)]
        if notes and recall_in == "system":
            context, notes = f"{context}\n\n{notes}".strip(), ""
        system = Message(
            role="system", content=Agent.system_prompt(instructions, context, context_template)
        )
        tail = [Message(role="system", content=notes)] if notes else []
        return [system, *history, *tail]

    async def respond(
        self,
        history: list[Message],
        *,
        instructions: str,
        memory_context: str = "",
        recall: str = "",
        recall_in: RecallPlacement = "turn",
        context_in: RecallPlacement = "system",
        context_template: Callable[[str], str] | None = None,
        first_join: str = "\n\n",
        tools: list[ToolSpec] | None = None,
        schema: type[BaseModel] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelOutput:
        """The agent's next message given the conversation so far (without system prompt)."""
        prompt = self.messages(
            history,
            instructions=instructions,
            memory_context=memory_context,
            recall=recall,
            recall_in=recall_in,
            context_in=context_in,
            context_template=context_template,
            first_join=first_join,
        )
        on_text = self.on_text if schema is None else None
        return await self.model.generate(
            prompt, tools=tools, schema=schema, config=config, on_text=on_text
        )
