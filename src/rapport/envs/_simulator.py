"""What every simulated user shares, whichever benchmark it plays in.

Each benchmark's simulator follows its own paper's protocol (MultiSessionCollab's user reacts
to every agent message and keeps a hidden draft; PrefIx's answers in words and ends with its
own token), so the base class holds only what they have in common: the token a user ends
with, the count of turns code wrote in its place, and the check that a user message has not
slipped into the assistant's voice.
"""

from __future__ import annotations

import re
from abc import ABC
from typing import ClassVar


class UserSimulator(ABC):
    """A simulated user of one benchmark.

    Attributes:
        end_token: what the user writes to end the conversation (each paper has its own).
        replaced: the user's messages that code wrote or replaced (role slips ...).
    """

    end_token: ClassVar[str]
    replaced: int = 0

    def ends(self, text: str) -> bool:
        """Whether a message ends the conversation."""
        return self.end_token in text

    def without_end(self, text: str) -> str:
        """A message with the end token taken out."""
        return text.replace(self.end_token, "").strip()


_ASSISTANT_VOICE = re.compile(
    r"\b(?:i'?m|i am) (?:here|ready|happy|glad) to (?:help|assist)|"
    r"\b(?:help|assist) you\b|how (?:can|may) i (?:help|assist)|"
    r"i'?d be (?:happy|glad) to help|tell me more about (?:the|your) problem|"
    r"what (?:problem|question) is it\b|what (?:do you|would you like to) need help with|"
    r"what (?:do you want|would you like) (?:to know|me to do)\b|"
    r"let me know (?:how|what) i can|feel free to ask|"
    r"if you have any (?:other|more|further) questions|i can(?:'|no)t assist with",
    re.IGNORECASE,
)


def sounds_like_assistant(message: str) -> bool:
    """Whether a user message offers help instead of asking for it (a role slip)."""
    return bool(_ASSISTANT_VOICE.search(message))
