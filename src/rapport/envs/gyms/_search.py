"""SearchGym: multi-hop questions over an offline corpus we generate; BM25 search."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._content import split_pool
from ._core import Gym, Step, normalize

_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ren",
    "to",
    "va",
    "sel",
    "dor",
    "an",
    "is",
    "bre",
    "zu",
    "pha",
    "qui",
    "mar",
    "nel",
    "os",
    "tri",
    "gal",
    "fen",
)


def _name(rng: random.Random, parts: int, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()
        if name not in taken:
            taken.add(name)
            return name


@dataclass
class World:
    """The generated facts: people, cities, countries, companies and their links."""

    docs: list[str] = field(default_factory=list)
    questions: list[tuple[str, str]] = field(default_factory=list)


@functools.cache
def world(seed: int = 7) -> World:
    """Build the corpus and its questions (deterministic for a seed)."""
    rng, taken, w = random.Random(seed), set[str](), World()
    countries = [_name(rng, 2, taken) + "ia" for _ in range(10)]
    city_country = {_name(rng, 3, taken): rng.choice(countries) for _ in range(30)}
    cities = sorted(city_country)
    for city, country in city_country.items():
        w.docs.append(f"{city} is a city in the country of {country}.")
    for _ in range(60):
        person = f"{_name(rng, 2, taken)} {_name(rng, 3, taken)}"
        company = _name(rng, 2, taken) + " " + rng.choice(("Works", "Labs", "Foods", "Motors"))
        born, hq = rng.choice(cities), rng.choice(cities)
        w.docs += [
            f"{person} was born in the city of {born}.",
            f"{person} founded {company}.",
            f"{company} has its headquarters in {hq}.",
        ]
        w.questions += [
            (f"In which country was the founder of {company} born?", city_country[born]),
            (f"In which city is the company {company} headquartered?", hq),
            (f"In which country is the headquarters of {company}?", city_country[hq]),
        ]
    return w


@functools.cache
def _index(seed: int = 7) -> Any:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(world(seed).docs, show_progress=False), show_progress=False)
    return retriever


def search(query: str, k: int = 3, seed: int = 7) -> list[str]:
    """The top-k corpus documents for a query under BM25."""
    import bm25s

    docs = world(seed).docs
    tokens = bm25s.tokenize([query], show_progress=False)
    if not tokens.vocab:
        return []
    results, _scores = _index(seed).retrieve(tokens, k=k, show_progress=False)
    return [docs[int(i)] for i in results[0]]


class SearchGym(Gym):
    """Answer a multi-hop question by searching the corpus; exact-match scoring."""

    name: ClassVar[str] = "search"
    instructions: ClassVar[str] = (
        "Answer the question using a search engine over a private encyclopedia. Search with "
        "`[search] <query>` (you get the top 3 passages); answer with `[answer] <short answer>`."
    )
    examples: ClassVar[dict[str, str]] = {
        "search": "[search] capital of the river kingdom",
        "answer": "[answer] Velmora",
    }
    talks: ClassVar[bool] = False

    def _start(self) -> str:
        self.question, self.gold = self.rng.choice(split_pool(world().questions, self.split))
        return "Question: " + self.question

    def hidden(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.gold}

    def secrets(self) -> list[str]:
        return [self.gold]

    def _search(self, query: str) -> Step:
        hits = search(query)
        return Step("\n".join(f"- {h}" for h in hits) or "No results.")

    def _answer(self, text: str) -> Step:
        self.score = float(normalize(text) == normalize(self.gold))
        return Step("Correct." if self.score else "Incorrect.", self.score, True)
