"""PrefIx's simulated user: holds interaction-preference settings and shows them only through
its reactions (never by naming them)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

from rapport.llm import (
    GenerateConfig,
    Invalid,
    Message,
    Model,
    ModelOutput,
    OutputValidationError,
    ask_again,
)

from .._simulator import UserSimulator, sounds_like_assistant
from ._settings import Setting

PREFIX_END_TOKEN = "<END>"
OPENING_CUE = (
    "(You are the person, not the assistant. Write your first message: ask for your task.)"
)
GO_ON = "Please go on."
DONE = f"That is all for now. {PREFIX_END_TOKEN}"
_NARRATES = re.compile(r"^\W*(?:the|my) (?:assistant|agent)\b", re.IGNORECASE)


def slips_out_of_role(text: str) -> bool:
    """Whether a user message speaks as the assistant or narrates it in the third person
    (small user models do both: "How can I help?", "The assistant ran book_flight.")."""
    return sounds_like_assistant(text) or bool(_NARRATES.match(text))


class PreferenceLeak(RuntimeError):
    """The simulator kept naming its preference after the retries."""


def leaked_terms(text: str, settings: Sequence[Setting]) -> list[str]:
    """The forbidden terms (keywords, setting and attribute names) that a message contains."""
    found = []
    for setting in settings:
        for term in setting.forbidden_terms:
            if re.search(rf"\b{re.escape(term.lower())}\b", text.lower()):
                found.append(term)
    return sorted(set(found))


class PrefixUserSimulator(UserSimulator):
    """Plays one user holding one or several settings, working towards a coarse instruction.

    Args:
        model: the ``user`` model.
        settings: the preferences the user holds (shown only implicitly).
        instruction: the coarse task instruction with every value the user knows.
        retries: re-asks after a message that names the preference or slips out of role.

    A message still out of role after the retries is replaced by code (`replaced` counts
    them): the instruction itself when it is the opening, else what the caller passes as
    `instead` (a request to go on by default).
    """

    end_token = PREFIX_END_TOKEN

    def __init__(
        self, model: Model, settings: Sequence[Setting], instruction: str, *, retries: int = 2
    ) -> None:
        self.model = model
        self.settings = list(settings)
        self.instruction = instruction
        self.retries = retries
        self.replaced = 0
        """Messages code wrote because every attempt slipped out of role."""

    def system_prompt(self) -> str:
        """The simulator's instructions, rendered from package data."""
        template = resources.files(__package__).joinpath("user_prompt.md").read_text("utf-8")
        forbidden = ", ".join(f'"{t}"' for s in self.settings for t in s.forbidden_terms)
        return template.format(
            instruction=self.instruction,
            cues="\n".join(f"- {s.cue}" for s in self.settings),
            forbidden=forbidden,
            end=PREFIX_END_TOKEN,
        )

    async def reply(self, seen: Sequence[Message], *, instead: str = GO_ON) -> str:
        """The user's next message given what the user has seen (its own lines as assistant).

        Raises:
            PreferenceLeak: every attempt named the preference.
        """
        messages = [Message(role="system", content=self.system_prompt()), *seen]
        if not seen:
            messages.append(Message(role="user", content=OPENING_CUE))

        def unleaked(output: ModelOutput, _last: bool) -> str:
            leaks = leaked_terms(output.text.replace(PREFIX_END_TOKEN, ""), self.settings)
            if leaks:
                raise Invalid(
                    f"(Rewrite that message without the words {leaks}: show how you "
                    "feel through your reaction only.)"
                )
            if slips_out_of_role(output.text):
                raise Invalid(
                    "(You are the person who wants the task done, not the assistant. Write "
                    "what you say to the assistant, in the first person.)"
                )
            return output.text.strip()

        try:
            return await ask_again(
                self.model,
                messages,
                unleaked,
                feedback=lambda reason: reason,
                attempts=self.retries + 1,
                config=GenerateConfig(max_tokens=200),
                what="user message",
            )
        except OutputValidationError as exc:  # every attempt was invalid (no schema is asked)
            leaks = leaked_terms(exc.raw.replace(PREFIX_END_TOKEN, ""), self.settings)
            if leaks:
                raise PreferenceLeak(
                    f"the simulated user kept naming its preference: {leaks}"
                ) from exc
            self.replaced += 1
            return self.instruction if not seen else instead


def is_end(text: str) -> bool:
    """Whether the user ended the session."""
    return PREFIX_END_TOKEN in text
