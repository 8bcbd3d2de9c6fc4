"""One MultiSessionCollab session as an episode: the simulated user's side of it."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rapport.llm import (
    GenerateConfig,
    Message,
    ModelOutput,
    ModelRoles,
    parse_json_output,
    stable_hash,
)
from rapport.log import Condition, ContextEvent, SessionInfo, SessionSpec, Speaker, StopReason

from .._protocol import AgentRequest, Episode, SessionLog
from ._grading import grade
from ._msc_prompts import SessionPrompts, Template, packaged_prompts
from ._msc_user import MscUser, PreferenceWords
from ._problems import stated_answer
from ._profiles import CollabUser
from ._rule_user import RuleUser
from ._simulator import CollabUserSimulator
from ._types import CollabOutcome, Problem

MSC_AGENT_CONFIG = GenerateConfig(temperature=1.0, max_tokens=2048)
"""MSC's agent sampling (its code: temperature 1.0, at most 2048 new tokens)."""
MSC_ATTEMPTS = 10
"""How often MSC's code asks its collaborator for a reply that parses (``num_retries``)."""
OPENING = "How can I help you?"
"""The agent's first message under MSC's protocol (a fixed greeting, not a model call)."""


class SessionSettings(BaseModel):
    """What a condition may change about a session (read from ``Condition.settings``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["multiturn", "direct"] = "multiturn"
    """``direct``: the agent gets the whole problem and answers once, no user simulation."""
    preferences: bool = True
    """False: the simulated user holds no preferences."""


@dataclass(frozen=True)
class Protocol:
    """How a session is played (the benchmark's options, for one episode).

    Attributes:
        session: ``msc`` (MSC's code: the agent opens with a greeting, the user never sees
            the agent's reply at the turn cap, the LLM user is `MscUser`) or ``guarded``
            (the user opens and reacts to every reply; the LLM user is
            `CollabUserSimulator`, guarded by code for small models).
        user: who plays the user: ``llm`` or ``rules``.
        verdicts: who decides enforcement: ``model`` or ``checkers``.
        grader: what grades the draft: ``judge`` or ``match``.
        enforcement: how the guarded LLM user words enforcements.
        length_rule: the agent prompt asks for short replies.
        agent_config: the agent's sampling.
        prompts: the ``msc`` session's agent, user and judge prompts (default: our own
            wording of MSC's).
    """

    session: Literal["msc", "guarded"] = "msc"
    user: Literal["llm", "rules"] = "llm"
    verdicts: Literal["model", "checkers"] = "model"
    grader: Literal["judge", "match"] = "judge"
    enforcement: Literal["model", "natural", "template"] = "model"
    length_rule: bool = False
    agent_config: GenerateConfig | None = MSC_AGENT_CONFIG
    prompts: SessionPrompts = field(default_factory=packaged_prompts)


@cache
def agent_prompt(name: str) -> str:
    """A packaged prompt (``msc_agent``: MSC's collaborator; ``agent``: the guarded
    session's; ``direct``: one-shot solver; ``length_rule``: the small models' line)."""
    return resources.files("rapport.envs.collab").joinpath(f"prompts/{name}.md").read_text()


def json_response(text: str) -> str | None:
    """The message of a reply on MSC's JSON path: its ``response`` as MSC's code takes it
    (``str`` of the value), when the reply is one JSON object holding ``reasoning`` and
    ``response``; None otherwise."""
    try:
        parsed = parse_json_output(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or not {"reasoning", "response"} <= parsed.keys():
        return None
    return str(parsed["response"])


def problem_text(problem: Problem) -> str:
    """The problem as the user sees it: the source's text, else the question and options."""
    return problem.prompt()


def task_line(problem: Problem) -> str:
    """One line saying what kind of problem the user brings (from its dataset)."""
    return packaged_prompts().task_line(problem)


class CollabEpisode(Episode):
    """The user brings the problem, reacts to the agent's replies, and keeps a draft answer.

    Args:
        spec: the session.
        user: the simulated user's profile.
        problem: the session's problem.
        condition: the condition, whose settings pick the mode.
        models: the run's roles (``user`` plays the user, ``judge`` grades).
        max_turns: the most agent replies (the orchestrator ends the session there).
        benchmark: the benchmark's name (for `SessionInfo`).
        protocol: how the session is played.
    """

    def __init__(
        self,
        spec: SessionSpec,
        user: CollabUser,
        problem: Problem,
        condition: Condition,
        models: ModelRoles,
        *,
        max_turns: int,
        benchmark: str = "collab",
        protocol: Protocol | None = None,
    ) -> None:
        self.problem, self.models = problem, models
        self.protocol = protocol or Protocol()
        self.turn_cap = max_turns
        self.settings = SessionSettings.model_validate(condition.settings)
        self.info = SessionInfo(
            index=spec.index,
            benchmark=benchmark,
            task="a multiple-choice question" if problem.choices else "a math problem",
        )
        self.user = self._user(spec, user)
        self.spec_id = spec.id
        self.history: list[Message] = []
        self.draft = ""
        self._log: SessionLog | None = None
        self.judged: bool | None = None

    def _user(
        self, spec: SessionSpec, user: CollabUser
    ) -> CollabUserSimulator | RuleUser | MscUser:
        prefs = user.preference_objects() if self.settings.preferences else []
        p = self.protocol
        if p.user == "rules":
            return RuleUser(
                persona=user.persona,
                problem=problem_text(self.problem),
                preferences=prefs,
                extract=functools.partial(stated_answer, self.problem),
                seed=f"{user.id}:{spec.id}:{spec.index}",
            )
        if p.session == "msc":
            words = user.preference_wording() if self.settings.preferences else []
            return MscUser(
                self.models.get("user"),
                persona=user.persona,
                task=p.prompts.task_line(self.problem),
                problem=problem_text(self.problem),
                preferences=[PreferenceWords(q.id, w) for q, w in zip(prefs, words, strict=True)],
                verdicts=p.verdicts,
                prompts=p.prompts,
            )
        return CollabUserSimulator(
            self.models.get("user"),
            persona=user.persona,
            problem=problem_text(self.problem),
            preferences=prefs,
            extract=functools.partial(stated_answer, self.problem, loose=True),
            enforce_with=p.enforcement,
            use_checkers=p.verdicts == "checkers",
        )

    async def start(self, log: SessionLog) -> None:
        self._log = log
        if self.settings.mode == "direct":
            self._add(log, "user", problem_text(self.problem))
            return
        if self.protocol.session == "msc":
            self._add(log, "agent", OPENING)
        if isinstance(self.user, MscUser):
            await self._react(log)
        else:
            self._add(log, "user", await self.user.opening())

    def request(self) -> AgentRequest:
        prompt = self._msc_agent_prompt() if self._msc_agent else self._other_prompt()
        if self.protocol.length_rule:
            prompt = f"{prompt.rstrip()}\n{agent_prompt('length_rule')}"
        return AgentRequest(
            messages=list(self.history),
            instructions=prompt,
            config=self.protocol.agent_config,
            recall_in="first" if self._msc_agent else "turn",
            context_template=self._msc_notes_prompt if self._notes_template else None,
            first_join="" if self._notes_template else "\n\n",
        )

    @property
    def _agent_name(self) -> str:
        return {"direct": "direct", "multiturn": "agent"}[self.settings.mode]

    @property
    def _msc_agent(self) -> bool:
        """Whether the agent is MSC's collaborator (its prompt is the session prompts')."""
        return self._agent_name == "agent" and self.protocol.session == "msc"

    @property
    def _notes_template(self) -> Template | None:
        """MSC's collaborator prompt with notes, where the session runs MSC's own prompts."""
        return self.protocol.prompts.agent_notes if self._msc_agent else None

    @property
    def _agent_budget(self) -> int:
        config = self.protocol.agent_config
        return config.max_tokens if config is not None and config.max_tokens else 2048

    def _msc_agent_prompt(self) -> str:
        return self.protocol.prompts.agent.render(max_tokens=str(self._agent_budget))

    def _other_prompt(self) -> str:
        """The guarded session's agent prompt, or the one-shot solver's (MSC's own where the
        session reads MSC's prompts: Table 3's S1)."""
        direct = self.protocol.prompts.direct
        if self.settings.mode == "direct" and direct is not None:
            return direct.render(max_tokens=str(self._agent_budget))
        return agent_prompt(self._agent_name)

    @property
    def _json_agent(self) -> bool:
        """Whether the agent answers MSC's JSON (its Llama-3.3-70B path)."""
        return self.protocol.prompts.agent_format == "json" and (
            self._msc_agent or self.settings.mode == "direct"
        )

    def retry(self, output: ModelOutput, attempt: int) -> GenerateConfig | None:
        """On MSC's JSON path, ask again (a fresh sample) while the reply is not its JSON,
        up to MSC's attempts."""
        if not self._json_agent or json_response(output.text) is not None:
            return None
        if attempt + 1 >= MSC_ATTEMPTS:
            return None
        base = self.protocol.agent_config or MSC_AGENT_CONFIG
        key = stable_hash("msc-json-again", self.spec_id, str(len(self.history)), str(attempt))
        return base.model_copy(update={"seed": int(key[:8], 16)})

    def _msc_notes_prompt(self, notes: str) -> str:
        """The agent's system prompt with memory's notes on the user in it (MSC's
        collaborator with notes)."""
        template = self._notes_template
        assert template is not None  # only handed out with the template
        return template.render(max_tokens=str(self._agent_budget), notes=notes)

    def _prompts_used(self) -> list[Template]:
        """The session prompts this session was played with (agent, user, judge)."""
        prompts, used = self.protocol.prompts, []
        noted = self._log is not None and self._log.record.events_of(ContextEvent)
        if self._notes_template is not None and noted:
            used.append(self._notes_template)
        elif self._msc_agent:
            used.append(prompts.agent)
        if isinstance(self.user, MscUser) and self.settings.mode == "multiturn":
            used.append(self.user.template)
        if self.protocol.grader == "judge":
            used.append(prompts.judge)
        return used

    async def respond(self, output: ModelOutput, log: SessionLog) -> None:
        text = output.text
        if self._json_agent:
            response = json_response(text)
            if response is None:
                raise ValueError(f"the agent's reply is not MSC's JSON after {MSC_ATTEMPTS} tries")
            text = response
        self._add(log, "agent", text)
        if self.settings.mode == "direct":
            self.draft, self.done = text.strip(), True
            return
        if self.at_cap and self.protocol.session == "msc":
            return  # MSC's user never reads the reply that reaches the turn cap
        await self._react(log)

    async def _react(self, log: SessionLog) -> None:
        try:
            reply = await self.user.react(self.history, turn=len(self.history))
        finally:
            self.draft = self.user.draft
        for event in reply.events:
            log.event(event)
        self._add(log, "user", reply.message)
        if reply.stop:
            log.stop(StopReason.USER_ENDED)
            self.done = True

    async def finish(self, log: SessionLog) -> None:
        """Grade the draft with the judge role, where the protocol says so."""
        if self.settings.mode == "multiturn":
            self.draft = self.user.draft
        if self.protocol.grader == "judge":
            judge = self.models.get("judge")
            template = self.protocol.prompts.judge
            self.judged = await grade(judge, self.problem, self.draft, log, template=template)

    def _add(self, log: SessionLog, speaker: Speaker, text: str) -> None:
        log.say(speaker, text)
        role: Literal["user", "assistant"] = "user" if speaker == "user" else "assistant"
        self.history.append(Message(role=role, content=text))

    def outcome(self) -> CollabOutcome:
        if self.settings.mode == "multiturn":
            self.draft = self.user.draft
        return CollabOutcome(
            draft=self.draft,
            answer=self.problem.answer,
            problem_id=self.problem.id,
            problem=self.problem,
            mode=self.settings.mode,
            grader=self.protocol.grader,
            judged=self.judged,
            prompts=self.protocol.prompts.describe(self._prompts_used()),
        )
