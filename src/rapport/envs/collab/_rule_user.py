"""The rule user: a MultiSessionCollab user played entirely by code.

The opening, the answers to the agent's questions, the enforcement (from the checkers,
phrased from varied everyday templates), the draft (the answer code extracts from the
agent's replies) and the stop decision are all code. It makes no model calls and cannot
slip out of role, so what a run measures is how the agent and its memory adapt.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from rapport.llm import Message
from rapport.log import Event

from ._checkers import check_preference, is_clarifying_question
from ._phrasings import enforcement_lines, phrase_list
from ._simulator import UserReply
from ._taxonomy import Preference
from ._types import DraftUpdateEvent, EnforcementEvent, PreferenceVerdictEvent

AnswerExtractor = Callable[[str], str | None]
"""The final answer an agent message states, or None when it states none."""


class NotCheckableError(ValueError):
    """The rule user was given a preference no checker decides."""


class RuleUser:
    """Plays one user for one session by rules alone.

    Args:
        persona: who the user is (kept for the record; rules do not read it).
        problem: the problem text the user brings.
        preferences: the user's preferences; each must have a checker.
        extract: the final answer an agent message states (None: it states none).
        seed: varies the wording between sessions and users (the same seed, the same words).

    Raises:
        NotCheckableError: a preference without a checker.
    """

    def __init__(
        self,
        *,
        persona: str,
        problem: str,
        preferences: Sequence[Preference] = (),
        extract: AnswerExtractor,
        seed: str = "",
    ) -> None:
        unchecked = [p.id for p in preferences if p.checker is None]
        if unchecked:
            raise NotCheckableError(f"the rule user needs checkable preferences: {unchecked}")
        self.persona, self.problem = persona, problem
        self.preferences = list(preferences)
        self.extract = extract
        self.seed = seed
        self.draft = ""
        """The answer the user settled on so far (the last one the agent stated)."""

    def _rng(self, turn: int) -> random.Random:
        return random.Random(f"rule-user:{self.seed}:{turn}")

    async def opening(self) -> str:
        """The first message: the task, stated in full."""
        return self._rng(0).choice(phrase_list("openings")).format(problem=self.problem)

    async def react(self, history: list[Message], *, turn: int) -> UserReply:
        """React to the agent's latest message (the last of `history`)."""
        text = history[-1].content if history else ""
        rng = self._rng(turn)
        if is_clarifying_question(text):
            verdicts = [self._verdict(p, text, turn, enforced=False) for p in self.preferences]
            answer = rng.choice(phrase_list("answers")).format(problem=self.problem)
            return UserReply(answer, events=list(verdicts))
        events: list[Event] = []
        violated: list[Preference] = []
        for pref in self.preferences:
            ok = bool(check_preference(pref.id, text))
            if not ok:
                violated.append(pref)
            events.append(self._verdict(pref, text, turn, enforced=not ok))
        events += [EnforcementEvent(turn=turn, preference_id=p.id) for p in violated]
        stated = self.extract(text)
        if stated and stated != self.draft:
            self.draft = stated
            events.append(DraftUpdateEvent(turn=turn, draft=stated))
        if violated:
            message = self._enforcement(violated, rng)
            return UserReply(message, events=events, enforced=[p.id for p in violated])
        answered = stated or (self.draft and self.draft in text)
        if answered and not text.rstrip().endswith("?"):
            # An answer stated (or restated) in the form the user wants, and the agent
            # is not waiting for the user: done.
            return UserReply(rng.choice(phrase_list("closings")), stop=True, events=events)
        return UserReply(rng.choice(phrase_list("go_on")), events=events)

    @staticmethod
    def _verdict(pref: Preference, text: str, turn: int, *, enforced: bool) -> Event:
        ok = check_preference(pref.id, text)
        return PreferenceVerdictEvent(
            turn=turn,
            preference_id=pref.id,
            model_satisfied=bool(ok),
            checker_satisfied=ok,
            enforced=enforced,
        )

    @staticmethod
    def _enforcement(violated: list[Preference], rng: random.Random) -> str:
        asks = [rng.choice(enforcement_lines(p.id)) for p in violated]
        return " ".join([rng.choice(phrase_list("lead_ins")), *asks])
