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
from rapport.prefs.prefix import Setting

END_TOKEN = "<END>"


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


class UserSimulator:
    """Plays one user holding one or several settings, working towards a coarse instruction.

    Args:
        model: the ``user`` model.
        settings: the preferences the user holds (shown only implicitly).
        instruction: the coarse task instruction with every value the user knows.
        retries: re-asks after a message that names the preference.
    """

    def __init__(
        self, model: Model, settings: Sequence[Setting], instruction: str, *, retries: int = 2
    ) -> None:
        self.model = model
        self.settings = list(settings)
        self.instruction = instruction
        self.retries = retries

    def system_prompt(self) -> str:
        """The simulator's instructions, rendered from package data."""
        template = (
            resources.files("rapport.users").joinpath("prompts/prefix_user.md").read_text("utf-8")
        )
        forbidden = ", ".join(f'"{t}"' for s in self.settings for t in s.forbidden_terms)
        return template.format(
            instruction=self.instruction,
            cues="\n".join(f"- {s.cue}" for s in self.settings),
            forbidden=forbidden,
            end=END_TOKEN,
        )

    async def reply(self, seen: Sequence[Message]) -> str:
        """The user's next message given what the user has seen (its own lines as assistant).

        Raises:
            PreferenceLeak: every attempt named the preference.
        """
        messages = [Message(role="system", content=self.system_prompt()), *seen]
        if not seen:
            messages.append(
                Message(role="user", content="(The assistant is ready. Say what you need.)")
            )

        def unleaked(output: ModelOutput, _last: bool) -> str:
            leaks = leaked_terms(output.text.replace(END_TOKEN, ""), self.settings)
            if leaks:
                raise Invalid(
                    f"(Rewrite that message without the words {leaks}: show how you "
                    "feel through your reaction only.)"
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
        except OutputValidationError as exc:  # every attempt leaked (no schema is asked for)
            leaks = leaked_terms(exc.raw.replace(END_TOKEN, ""), self.settings)
            raise PreferenceLeak(f"the simulated user kept naming its preference: {leaks}") from exc


def is_end(text: str) -> bool:
    """Whether the user ended the session."""
    return END_TOKEN in text
