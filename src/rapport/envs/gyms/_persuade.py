"""PersuadeGym: move an interlocutor's stance (1-5) on a statement by meeting their concerns."""

from __future__ import annotations

from typing import Any, ClassVar

from ._core import Gym, Step, words

STATEMENTS = (
    "Cities should close their centres to private cars.",
    "Schools should start one hour later in the morning.",
    "Every household should install solar panels.",
    "Remote work should be the default for office jobs.",
    "Public transport should be free for everyone.",
    "Junk food advertising should be banned on television.",
    "Voting should be compulsory.",
    "Homework should be abolished in primary school.",
    "A four-day working week should become standard.",
    "Plastic packaging should be taxed heavily.",
    "Museums should be free to enter.",
    "Cities should plant a tree for every new building.",
)
# concern -> (words an argument must use to address it, what the person says about it)
CONCERNS: dict[str, tuple[frozenset[str], str]] = {
    "cost": (
        frozenset(
            {
                "cost",
                "costs",
                "money",
                "cheaper",
                "save",
                "savings",
                "afford",
                "budget",
                "price",
                "funding",
                "pay",
            }
        ),
        "Who pays for it?",
    ),
    "evidence": (
        frozenset(
            {
                "study",
                "studies",
                "evidence",
                "data",
                "research",
                "trial",
                "results",
                "proven",
                "shows",
            }
        ),
        "Is there any evidence it works?",
    ),
    "fairness": (
        frozenset({"fair", "fairness", "equal", "everyone", "poor", "inequality", "access"}),
        "It seems unfair to some people.",
    ),
    "freedom": (
        frozenset({"choice", "freedom", "choose", "optional", "voluntary", "rights", "exceptions"}),
        "I don't like being told what to do.",
    ),
    "practical": (
        frozenset(
            {
                "plan",
                "gradual",
                "pilot",
                "step",
                "steps",
                "phase",
                "trial",
                "schedule",
                "transition",
            }
        ),
        "How would it even work in practice?",
    ),
    "health": (
        frozenset(
            {"health", "healthy", "wellbeing", "sleep", "stress", "safety", "safe", "pollution"}
        ),
        "What about people's health and safety?",
    ),
}


class PersuadeGym(Gym):
    """Each argument that addresses an open concern moves the stance one step toward 5.

    The person starts at stance 1 or 2 with ``5 - stance`` hidden concerns; score =
    stance shift / largest possible shift. Replies are code-written.
    """

    name: ClassVar[str] = "persuade"
    instructions: ClassVar[str] = (
        "Persuade the person to agree with a statement. Make one argument per turn with "
        "`[action] <argument>`; listen to their objections. Send `[finish]` when done. "
        "Their stance runs from 1 (strongly disagree) to 5 (strongly agree)."
    )
    examples: ClassVar[dict[str, str]] = {
        "action": "[action] Studies show it saves most families time every week.",
        "finish": "[finish]",
    }
    final_move: ClassVar[str] = "finish"

    def _start(self) -> str:
        self.statement = self.rng.choice(STATEMENTS)
        self.initial = self.stance = self.rng.choice((1, 2))
        self.concerns = self.rng.sample(sorted(CONCERNS), 5 - self.initial)
        self.met: set[str] = set()
        return (
            f"Statement: {self.statement}\nPerson: I disagree with that (stance "
            f"{self.stance}/5). {CONCERNS[self.concerns[0]][1]}"
        )

    def hidden(self) -> dict[str, Any]:
        return {"statement": self.statement, "stance": self.stance, "concerns": self.concerns}

    def _act(self, text: str) -> Step:
        tokens = words(text)
        newly = [c for c in self.concerns if c not in self.met and tokens & CONCERNS[c][0]]
        if not newly:
            open_ = [c for c in self.concerns if c not in self.met]
            worry = CONCERNS[open_[0]][1] if open_ else "I'm already convinced."
            return Step(f"That doesn't change my mind (stance {self.stance}/5). {worry}")
        self.met.add(newly[0])
        self.stance += 1
        shift = 1 / (5 - self.initial)
        self.score = (self.stance - self.initial) / (5 - self.initial)
        open_ = [c for c in self.concerns if c not in self.met]
        tail = CONCERNS[open_[0]][1] if open_ else "You have convinced me."
        return Step(
            f"Fair point (stance {self.stance}/5). {tail}",
            shift,
            self.stance == 5,
            {"stance": self.stance},
        )
