"""The MultiSessionCollab user simulator: a persona with a hidden problem, preferences and a
hidden draft answer, played by the ``user`` model under rules that code enforces."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rapport.llm import GenerateConfig, Message, Model
from rapport.log import Event, UserGuardEvent

from .._simulator import UserSimulator, sounds_like_assistant
from ._phrasings import enforcement_lines, phrase_list
from ._rules import (
    COLLAB_END_TOKEN,
    UserReaction,
    clean_message,
    decide_preferences,
    enforcement_message,
    prompt,
    wants_to_stop,
)
from ._taxonomy import Preference
from ._types import DraftUpdateEvent, EnforcementEvent

_TRANSCRIPT_MESSAGES = 4
"""How many earlier messages the user model re-reads (small models have short contexts, and
on a CPU every re-read token costs time: a user turn is mostly prompt evaluation)."""
_MESSAGE_CHARS = 1500
"""The latest agent message is clipped here."""
_EARLIER_CHARS = 500
"""Earlier messages are clipped here: the user needs their gist, not every line."""
_CLOSING = "Thanks, that settles it."


@dataclass
class UserReply:
    """The user's reaction to one agent message, after the code rules were applied."""

    message: str
    stop: bool = False
    events: list[Event] = field(default_factory=list)
    """Preference verdicts, enforcements and draft updates, in that order."""
    enforced: list[str] = field(default_factory=list)
    """Ids of the preferences enforced in `message`."""


class CollabUserSimulator(UserSimulator):
    """Plays one user for one session.

    Only the user sees the problem. It opens vaguely, answers the agent's questions, keeps
    a draft answer the agent never sees, and enforces its preferences when a reply breaks
    them. The model reasons; `decide_preferences` and the rules below decide.

    Args:
        model: the ``user`` role model.
        persona: who the user is, in words.
        problem: the problem text only the user sees.
        preferences: the user's preferences (none for a preference-free user).
        config: sampling settings for the user model.
        extract: the final answer an agent message states (None: none). Given, the draft
            is what code extracts and the model only accepts or rejects it (``update_draft``);
            not given, the draft is what the model writes.
        enforce_with: who words an enforcement: ``model`` (the user model, in its own words,
            checked not to paste the criterion; code's everyday phrasing when it fails),
            ``natural`` (code's everyday phrasing) or ``template`` (the preference's name and
            criterion verbatim: the easiest signal to learn from).
        use_checkers: a deterministic checker's verdict overrides the model's (False: it
            is only recorded).
    """

    end_token = COLLAB_END_TOKEN

    def __init__(
        self,
        model: Model,
        *,
        persona: str,
        problem: str,
        preferences: Sequence[Preference] = (),
        config: GenerateConfig | None = None,
        extract: Callable[[str], str | None] | None = None,
        enforce_with: Literal["model", "natural", "template"] = "template",
        use_checkers: bool = True,
    ) -> None:
        self.model = model
        self.persona = persona
        self.problem = problem
        self.preferences = list(preferences)
        self.config = config or GenerateConfig(temperature=0.3, max_tokens=400)
        self.draft = ""
        """The hidden draft answer (empty until the user settles on something)."""
        self.extract, self.enforce_with = extract, enforce_with
        self.use_checkers = use_checkers

    async def opening(self) -> str:
        """The first message: the need, without pasting the whole problem.

        Raises:
            ModelError: the user model failed.
        """
        system = prompt("opening").format(persona=self.persona, problem=self.problem)
        out = await self.model.generate(
            [Message(role="system", content=system), Message(role="user", content="Your message:")],
            config=self.config.model_copy(update={"max_tokens": 120}),
        )
        return vague_opening(clean_message(out.text), self.problem)

    async def react(self, history: list[Message], *, turn: int) -> UserReply:
        """React to the agent's latest message (the last of `history`).

        Args:
            history: the conversation as the agent sees it (``user``: this user,
                ``assistant``: the agent), ending with the agent's message.
            turn: the index the reply will have in the session's turns.

        Raises:
            ModelError: the user model failed (OutputValidationError: bad structured output).
        """
        agent_text = history[-1].content if history else ""
        candidate = self.extract(agent_text) if self.extract is not None else None
        out = await self.model.generate(
            self._react_prompt(history, candidate), schema=UserReaction, config=self.config
        )
        reaction: UserReaction = out.parsed
        decision = decide_preferences(
            reaction, self.preferences, agent_text, turn=turn, use_checkers=self.use_checkers
        )
        events: list[Event] = list(decision.verdicts)
        if decision.violated:
            ids = [p.id for p in decision.violated]
            events += [EnforcementEvent(turn=turn, preference_id=i) for i in ids]
            message, guarded = await self._enforcement(decision.violated, agent_text, turn)
            if guarded:
                events.append(UserGuardEvent(turn=turn, reason=f"{guarded}"))
            return UserReply(message, events=events, enforced=ids)
        events += self._update_draft(reaction, turn, candidate)
        stop = wants_to_stop(reaction) and bool(self.draft)
        message = clean_message(reaction.message) or (_CLOSING if stop else "Go on.")
        if echoes(message, agent_text) or sounds_like_assistant(message):
            # Small user models slip into the assistant's role and repeat its message; code
            # answers for them: done when the draft is settled, else ask to go on.
            stop = bool(self.draft)
            message = _CLOSING if stop else _CONFUSED
            events.append(UserGuardEvent(turn=turn, reason="role slip or pasted reply"))
        if not stop and decision.clarifying and not self._shared(history):
            revealed = reveal_problem(message, self.problem)
            if revealed != message:
                events.append(UserGuardEvent(turn=turn, reason="problem shared by code"))
            message = revealed
        return UserReply(message, stop=stop, events=events)

    async def _enforcement(
        self, violated: list[Preference], agent_text: str, turn: int
    ) -> tuple[str, str]:
        """The enforcing message, and why code wrote it ("" when the model's words stand)."""
        if self.enforce_with == "template":
            return enforcement_message(violated), ""
        natural = " ".join(
            [
                _pick(phrase_list("lead_ins"), turn),
                *(_pick(enforcement_lines(p.id), turn) for p in violated),
            ]
        )
        if self.enforce_with == "natural":
            return natural, ""
        wants = "\n".join(f"- {' '.join(p.description.split())}" for p in violated)
        system = prompt("enforce_phrase").format(persona=self.persona, wants=wants)
        out = await self.model.generate(
            [Message(role="system", content=system), Message(role="user", content="Your message:")],
            config=self.config.model_copy(update={"max_tokens": 80}),
        )
        message = clean_message(out.text)
        problem = _enforcement_problem(message, violated, agent_text)
        return (natural, f"enforcement {problem}") if problem else (message, "")

    def _shared(self, history: list[Message]) -> bool:
        """Whether this user has already given the agent the whole problem."""
        question = self.problem.split("\n\n")[0]
        return any(m.role == "user" and pastes(m.content, question) for m in history)

    def _update_draft(
        self, reaction: UserReaction, turn: int, candidate: str | None
    ) -> list[Event]:
        if self.extract is not None:
            # Code extracts the candidate; the model only accepts (update_draft) or not.
            new = candidate.strip() if candidate and reaction.update_draft else ""
        else:
            new = reaction.draft.strip()
        if not reaction.update_draft or not new or new == self.draft:
            return []
        self.draft = new
        return [DraftUpdateEvent(turn=turn, draft=new)]

    def _react_prompt(self, history: list[Message], candidate: str | None) -> list[Message]:
        system = prompt("react").format(
            persona=self.persona,
            problem=self.problem,
            preferences=self._preference_lines(),
            end_token=COLLAB_END_TOKEN,
        )
        *earlier, latest = history or [Message(role="assistant", content="")]
        # What changes from turn to turn comes after the fixed instructions, so that the
        # evaluated prefix of the system prompt is reused from one user turn to the next.
        draft = self.draft or "(empty: you have no answer yet)"
        offered = (
            f"The answer the assistant states in its latest message: {candidate} "
            "(update_draft: true accepts it as your draft)\n\n"
            if candidate
            else ""
        )
        task = (
            f"Your draft answer so far: {draft}\n\n{offered}"
            f"Conversation so far:\n{render_transcript(earlier)}\n\n"
            f"The assistant's latest message:\n{_clip(latest.content)}\n\nYour JSON:"
        )
        return [Message(role="system", content=system), Message(role="user", content=task)]

    def _preference_lines(self) -> str:
        if not self.preferences:
            return "(none in particular: judge only whether you are getting the help you need)"
        return "\n".join(f"- {p.id}: {' '.join(p.description.split())}" for p in self.preferences)


def render_transcript(history: list[Message]) -> str:
    """The recent conversation from the user's side (``You`` / ``Assistant``)."""
    if not history:
        return "(nothing yet)"
    recent = history[-_TRANSCRIPT_MESSAGES:]
    return "\n".join(
        f"{'You' if m.role == 'user' else 'Assistant'}: {_clip(m.content, _EARLIER_CHARS)}"
        for m in recent
    )


_CONFUSED = "I am not sure I follow yet. Could you go through it with me?"
_WORD = re.compile(r"[a-z]{4,}")
_COMMON = frozenset(
    {
        "that",
        "this",
        "with",
        "your",
        "you'd",
        "could",
        "would",
        "please",
        "reply",
        "replies",
        "want",
        "like",
        "just",
        "make",
        "more",
        "less",
        "they",
        "them",
        "what",
        "when",
        "then",
        "have",
        "from",
        "into",
        "about",
        "each",
        "only",
        "every",
        "also",
    }
)


def _pick(options: list[str], turn: int) -> str:
    return options[turn % len(options)] if options else ""


def _keywords(pref: Preference) -> set[str]:
    text = " ".join([pref.name, pref.description, *enforcement_lines(pref.id)]).lower()
    return set(_WORD.findall(text)) - _COMMON


def _enforcement_problem(message: str, violated: list[Preference], agent_text: str) -> str:
    """Why a model-worded enforcement cannot stand ("" when it can): empty, in the
    assistant's voice, a copy of the agent's reply, the criterion pasted, or about none of
    the violated preferences."""
    if not message.strip():
        return "empty"
    if sounds_like_assistant(message) or echoes(message, agent_text):
        return "role slip or pasted reply"
    lowered = message.lower()
    for pref in violated:
        if pref.id in lowered or pastes(message, pref.enforcement, share=0.5):
            return "pasted the criterion"
    said = set(_WORD.findall(lowered))
    if not any(said & _keywords(p) for p in violated):
        return "off the point"
    return ""


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def vague_opening(message: str, problem: str) -> str:
    """The opening message, replaced by a partial quote when it pastes the whole problem or
    speaks as the assistant.

    Code decides here because small models tend to copy the problem verbatim, or to open
    with an offer of help instead of a request for it.
    """
    question = problem.split("\n\n")[0]  # without the lettered options, if any
    pasted = pastes(message, problem) or pastes(message, question)
    if message and not pasted and not sounds_like_assistant(message):
        return message
    words = question.split()
    head = " ".join(words[: max(3, len(words) // 3)])
    return f'Hi, I am stuck on a problem that starts "{head} ..." Could you help me with it?'


def echoes(message: str, agent_text: str) -> bool:
    """Whether the user's message mostly repeats the agent's (half its three-word runs)."""
    return bool(agent_text.strip()) and pastes(message, agent_text, share=0.5)


def reveal_problem(message: str, problem: str) -> str:
    """The reply to an agent that asks for the problem, with the problem in it.

    Code makes sure of it because small user models often answer a request for the problem
    with pleasantries, and the session then never gets going.
    """
    if gives_details(message, problem):
        return message
    return f"{message}\n\nHere is the whole problem: {problem}".strip()


def gives_details(message: str, problem: str) -> bool:
    """Whether `message` passes on something of `problem`: one of its numbers or a
    three-word run of it."""
    said, asked = message.lower().split(), problem.lower().split()
    numbers = set(_NUMBER.findall(problem))
    if numbers & set(_NUMBER.findall(message)):
        return True
    runs = {tuple(asked[i : i + 3]) for i in range(len(asked) - 2)}
    return any(tuple(said[i : i + 3]) in runs for i in range(len(said) - 2))


def pastes(message: str, problem: str, *, share: float = 0.7) -> bool:
    """Whether `message` copies (nearly) all of `problem`: the problem verbatim, or at least
    `share` of its three-word runs."""
    said, asked = message.lower().split(), problem.lower().split()
    if " ".join(asked) in " ".join(said):
        return True
    runs = {tuple(asked[i : i + 3]) for i in range(len(asked) - 2)}
    if not runs:
        return False
    present = {tuple(said[i : i + 3]) for i in range(len(said) - 2)}
    return len(runs & present) >= share * len(runs)


def _clip(text: str, chars: int = _MESSAGE_CHARS) -> str:
    return text if len(text) <= chars else text[:chars] + " [...]"
