"""MultiSessionCollab's user as its code plays it: the user model reads the whole conversation,
judges each preference, decides whether to enforce, keeps its own draft answer and may end
the conversation at any turn; code only records what it decided.

With ``verdicts="checkers"`` the code checkers decide the preferences they can check, and a
message that contradicts their decision is replaced (recorded as a `UserGuardEvent`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model
from rapport.log import Event, UserGuardEvent

from .._simulator import UserSimulator
from ._checkers import check_preference, is_clarifying_question
from ._msc_prompts import MSC_END_TOKEN, SessionPrompts, Template, packaged_prompts
from ._simulator import UserReply
from ._types import DraftUpdateEvent, EnforcementEvent, PreferenceVerdictEvent

MSC_USER_CONFIG = GenerateConfig(temperature=1.0, max_tokens=1024)
"""MSC's user sampling (its code: temperature 1.0, at most 1024 new tokens)."""
NO_DRAFT = "I don't know"
"""The draft a user starts from."""
_REDO = "That does not work for me yet: please redo your reply the way I asked."
_GO_ON = "Thanks, that works for me. Please go on."


class PreferenceCheck(BaseModel):
    """The user's judgement of one preference on the agent's latest reply."""

    reasoning: str = ""
    satisfied: bool = True


class MscUserTurn(BaseModel):
    """The user model's reply: its judgements, its decision, its draft and its message."""

    preferences: list[PreferenceCheck] = Field(default_factory=list)
    enforce_preferences: bool = False
    reasoning: str = ""
    draft_answer: str = ""
    should_terminate: bool = False
    response: str = Field(min_length=1)


class MscPublishedTurn(BaseModel):
    """The reply layout MSC's own user prompt asks for (``prompts_from``): a reason per
    preference, and one flag for whether the message enforces any."""

    preference_1_satisfied: str = ""
    preference_2_satisfied: str = ""
    preference_3_satisfied: str = ""
    enforce_preferences: bool = False
    reasoning: str
    draft_answer: str
    should_terminate: bool
    response: str = Field(min_length=1)


class MscPublishedPlainTurn(BaseModel):
    """The reply layout of MSC's own prompt for a user without preferences."""

    reasoning: str
    draft_answer: str
    should_terminate: bool
    response: str = Field(min_length=1)


def _as_turn(reply: BaseModel) -> MscUserTurn:
    """A reply in MSC's own layout as ours, without per-preference judgements."""
    if isinstance(reply, MscUserTurn):
        return reply
    reasons = {f"preference_{n}_satisfied" for n in (1, 2, 3)}
    return MscUserTurn.model_validate(reply.model_dump(exclude=reasons))


@dataclass
class PreferenceWords:
    """One preference as the user holds it: our id (for checkers and events) and the words
    the user is told."""

    id: str
    text: str


class MscUser(UserSimulator):
    """Plays one MultiSessionCollab user for one session, as MSC's code does.

    Args:
        model: the ``user`` role model.
        persona: who the user is, in words.
        task: what kind of problem it is, in one line (``Solve this math problem with ...``).
        problem: the problem, as the source wrote it.
        preferences: the user's preferences (none for a preference-free user).
        verdicts: who decides enforcement: ``model`` (the user model's flag, as MSC) or
            ``checkers`` (code where a checker decides, the model elsewhere).
        config: the user model's sampling (default: MSC's).
        prompts: the session's prompts (default: our own wording).
    """

    end_token = MSC_END_TOKEN

    def __init__(
        self,
        model: Model,
        *,
        persona: str,
        task: str,
        problem: str,
        preferences: Sequence[PreferenceWords] = (),
        verdicts: Literal["model", "checkers"] = "model",
        config: GenerateConfig | None = None,
        prompts: SessionPrompts | None = None,
    ) -> None:
        self.model, self.persona, self.task, self.problem = model, persona, task, problem
        self.preferences = list(preferences)
        self.verdicts = verdicts
        self.config = config or MSC_USER_CONFIG
        self.prompts = prompts or packaged_prompts()
        self.draft = NO_DRAFT

    @property
    def template(self) -> Template:
        """The user prompt this user is given (with or without preferences)."""
        plain = self.prompts.user_plain
        return plain if plain is not None and not self.preferences else self.prompts.user

    @property
    def reply_schema(self) -> type[BaseModel]:
        """The reply layout the user prompt asks for."""
        if self.template is not self.prompts.user:
            return MscPublishedPlainTurn
        return MscUserTurn if self.prompts.packaged else MscPublishedTurn

    def ends(self, text: str) -> bool:
        """Whether a message ends the conversation (holds the prompts' end token)."""
        return self.prompts.end_token in text

    def system_prompt(self) -> str:
        """The user model's instructions for this session."""
        listed = "\n".join(f"{n}. {p.text}" for n, p in enumerate(self.preferences, start=1))
        return self.template.render(
            task=self.task,
            problem=self.problem,
            persona=self.persona,
            preferences=listed or "(none in particular)",
            end_token=self.prompts.end_token,
        )

    async def react(self, history: list[Message], *, turn: int) -> UserReply:
        """The user's next message, given the conversation so far (``assistant``: the agent,
        ``user``: this user), which ends with the agent's latest message.

        Raises:
            ModelError: the user model failed (OutputValidationError: bad structured output).
        """
        # The user model sees the conversation with the roles reversed: the agent's
        # messages are its input, its own earlier messages its replies.
        seen = [
            Message(role="user" if m.role == "assistant" else "assistant", content=m.content)
            for m in history
        ]
        messages = [Message(role="system", content=self.system_prompt()), *seen]
        out = await self.model.generate(messages, schema=self.reply_schema, config=self.config)
        reply = _as_turn(out.parsed)
        agent_text = history[-1].content if history else ""
        return self._decide(reply, agent_text, turn)

    def _decide(self, reply: MscUserTurn, agent_text: str, turn: int) -> UserReply:
        """Record what the user decided. As MSC's code reads it: the enforce flag counts,
        the draft is the model's latest, and the end token in the response ends the
        conversation, enforcing or not. Under ``checkers``, code's decision stands: an
        enforcing turn neither updates the draft nor ends."""
        verdicts = self._verdicts(reply, agent_text, turn)
        events: list[Event] = list(verdicts)
        message = reply.response  # as the user model wrote it, as MSC's code keeps it
        # A user without preferences has none to enforce: its reply holds no flag (S2).
        enforce = reply.enforce_preferences and bool(self.preferences)
        if self.verdicts == "checkers":
            enforce = any(v.enforced for v in verdicts)
            if enforce != reply.enforce_preferences:
                message = _REDO if enforce else _GO_ON
                why = "checkers found a broken preference" if enforce else "checkers found none"
                events.append(UserGuardEvent(turn=turn, reason=f"{why}; message by code"))
        broken = [v.preference_id for v in verdicts if v.enforced]
        if enforce:
            events += [EnforcementEvent(turn=turn, preference_id=i) for i in broken or [""]]
        if self.verdicts == "model" or not enforce:
            draft = reply.draft_answer.strip()
            if draft != self.draft:
                self.draft = draft
                events.append(DraftUpdateEvent(turn=turn, draft=draft))
        stop = self.ends(message) and (self.verdicts == "model" or not enforce)
        return UserReply(message, stop=stop, events=events, enforced=broken if enforce else [])

    def _verdicts(
        self, reply: MscUserTurn, agent_text: str, turn: int
    ) -> list[PreferenceVerdictEvent]:
        """One verdict per preference: the model's, beside the checker's (a second opinion;
        it decides only under ``verdicts="checkers"``)."""
        clarifying = is_clarifying_question(agent_text)
        # MSC's own prompt gives a reason per preference but one flag: each preference then
        # reads as the flag says, and an enforcing message names none in particular.
        per_preference = self.prompts.packaged
        verdicts = []
        for n, pref in enumerate(self.preferences):
            model_ok = reply.preferences[n].satisfied if n < len(reply.preferences) else True
            if not per_preference:
                model_ok = not reply.enforce_preferences
            checker_ok = check_preference(pref.id, agent_text)
            decided = checker_ok if self.verdicts == "checkers" and checker_ok is not None else None
            satisfied = model_ok if decided is None else decided
            enforced = not satisfied and not (self.verdicts == "checkers" and clarifying)
            if self.verdicts == "model":
                enforced = per_preference and not model_ok and reply.enforce_preferences
            verdicts.append(
                PreferenceVerdictEvent(
                    turn=turn,
                    preference_id=pref.id,
                    model_satisfied=model_ok,
                    checker_satisfied=checker_ok,
                    enforced=enforced,
                )
            )
        return verdicts
