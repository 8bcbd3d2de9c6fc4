"""TravelGym: pick a hotel for a user whose preferences are hidden until asked about."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from ._core import Gym, Step, words

CITIES = ("Lisbon", "Kyoto", "Oslo", "Cusco", "Hanoi", "Porto", "Tallinn", "Marrakesh")
# aspect -> (question words, sign: +1 more is better, -1 less is better, sentence template)
ASPECTS: dict[str, tuple[frozenset[str], int, str]] = {
    "price": (
        frozenset({"price", "budget", "cost", "cheap", "expensive", "money", "afford"}),
        -1,
        "The price matters to me: cheaper is better.",
    ),
    "distance": (
        frozenset(
            {"location", "distance", "centre", "center", "close", "near", "central", "far", "walk"}
        ),
        -1,
        "I want to be close to the centre.",
    ),
    "rating": (
        frozenset({"rating", "reviews", "review", "rated", "quality"}),
        1,
        "Guest ratings matter to me: higher is better.",
    ),
    "stars": (
        frozenset({"stars", "star", "luxury", "fancy", "class"}),
        1,
        "I like a hotel with more stars.",
    ),
    "breakfast": (
        frozenset({"breakfast", "food", "meal", "meals", "eat"}),
        1,
        "Breakfast included would be great.",
    ),
    "pool": (
        frozenset({"pool", "swim", "swimming", "gym", "amenities", "facilities"}),
        1,
        "A pool would be lovely.",
    ),
}
N_OPTIONS = 8


@dataclass(frozen=True)
class Hotel:
    """One option in the generated catalogue."""

    id: str
    price: int
    distance: float
    rating: float
    stars: int
    breakfast: bool
    pool: bool

    def line(self) -> str:
        """One catalogue line."""
        return (
            f"{self.id}: {self.price} per night, {self.distance} km from centre, rating "
            f"{self.rating}, {self.stars} stars, breakfast {'yes' if self.breakfast else 'no'}"
            f", pool {'yes' if self.pool else 'no'}"
        )


class TravelGym(Gym):
    """Score = 0.5 ** rank of the chosen hotel under the hidden preferences (best: 1.0)."""

    name: ClassVar[str] = "travel"
    instructions: ClassVar[str] = (
        "Book a hotel the user will like. `[search] <query>` lists the options; ask about "
        "preferences with `[action] <question>`; book with `[answer] <hotel id>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "search": "[search] hotels",
        "action": "[action] Is a quiet room more important to you than a low price?",
        "answer": "[answer] H3",
    }

    def _start(self) -> str:
        self.city = self.rng.choice(CITIES)
        self.hotels = [self._hotel(i) for i in range(N_OPTIONS)]
        chosen = self.rng.sample(sorted(ASPECTS), 3)
        self.weights = dict(zip(chosen, (3.0, 2.0, 1.0), strict=True))
        self.told: set[str] = set()
        self.ranking = sorted(self.hotels, key=self.utility, reverse=True)
        return f"User: I need a hotel in {self.city} for a few nights. Can you book one?"

    def _hotel(self, i: int) -> Hotel:
        r = self.rng
        return Hotel(
            id=f"H{i + 1}",
            price=r.randrange(40, 400, 5),
            distance=round(r.uniform(0.2, 12.0), 1),
            rating=round(r.uniform(6.0, 9.8), 1),
            stars=r.randint(2, 5),
            breakfast=r.random() < 0.5,
            pool=r.random() < 0.4,
        )

    def utility(self, hotel: Hotel) -> float:
        """The hidden preference score of a hotel (features scaled to about [0, 1])."""
        feats = {
            "price": hotel.price / 400,
            "distance": hotel.distance / 12,
            "rating": hotel.rating / 10,
            "stars": hotel.stars / 5,
            "breakfast": float(hotel.breakfast),
            "pool": float(hotel.pool),
        }
        return sum(w * ASPECTS[a][1] * feats[a] for a, w in self.weights.items())

    def hidden(self) -> dict[str, Any]:
        return {"weights": self.weights, "best": self.ranking[0].id}

    def secrets(self) -> list[str]:
        return [self.ranking[0].id]

    def _search(self, query: str) -> Step:
        return Step(f"Hotels in {self.city}:\n" + "\n".join(h.line() for h in self.hotels))

    def _act(self, text: str) -> Step:
        tokens = words(text)
        asked = [a for a, (kws, _, _) in ASPECTS.items() if tokens & kws]
        if not asked:
            important = [a for a in self.weights if a not in self.told]
            asked = (
                important[:1]
                if tokens & {"prefer", "preferences", "important", "matter", "want", "need", "like"}
                else []
            )
        if not asked:
            return Step("Hmm, I'm not sure what you mean.")
        self.told.update(asked)
        lines = [ASPECTS[a][2] if a in self.weights else f"I don't mind about {a}." for a in asked]
        return Step(" ".join(lines))

    def _answer(self, text: str) -> Step:
        match = re.search(r"\bH(\d+)\b", text, re.IGNORECASE)
        ids = [h.id for h in self.ranking]
        choice = f"H{match.group(1)}" if match else ""
        if choice not in ids:
            return Step("Please book one of the listed hotel ids, e.g. [answer] H3.")
        rank = ids.index(choice)
        self.score = 0.5**rank
        return Step(f"Booked {choice}.", self.score, True, {"rank": rank})
