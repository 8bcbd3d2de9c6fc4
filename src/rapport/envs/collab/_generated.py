"""Generated problem families with exact answers: arithmetic, linear equations, logic puzzles.

Every problem is drawn from its own seeded random source (seed, family, index), so the first
`n` problems of a source do not change when more are asked for. Logic puzzles are checked by
brute force: a puzzle is kept only when exactly one world satisfies its clues.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from ._types import Problem, letter

FAMILIES = ("arithmetic", "linear", "logic")
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
_COUNTS = {4: "Four", 5: "Five"}


@functools.cache
def _data() -> dict[str, Any]:
    path = Path(__file__).parent / "data" / "generated.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def generate_problems(n: int, seed: int, family: str | None = None) -> list[Problem]:
    """`n` generated problems; one family, or the three in turn when `family` is None."""
    problems = []
    for i in range(n):
        fam = family or FAMILIES[(i + seed) % len(FAMILIES)]
        rng = random.Random(f"{seed}:{fam}:{i}")
        problems.append(_GENERATORS[fam](rng, f"gen-{fam}-{seed}-{i}"))
    return problems


# --- arithmetic word problems --------------------------------------------------------------

Values = dict[str, int]


def _buy_packs_give(r: random.Random) -> tuple[Values, int]:
    a, b, c = r.randint(3, 40), r.randint(2, 6), r.randint(3, 12)
    d = r.randint(1, a + b * c - 1)
    return {"a": a, "b": b, "c": c, "d": d}, a + b * c - d


def _trays_sold(r: random.Random) -> tuple[Values, int]:
    a, b = r.randint(3, 9), r.randint(6, 12)
    c = r.randint(1, a * b // 2)
    d = r.randint(0, a * b - c - 1)
    return {"a": a, "b": b, "c": c, "d": d}, a * b - c - d


def _two_rates(r: random.Random) -> tuple[Values, int]:
    a, b, c, d = r.randint(5, 30), r.randint(2, 9), r.randint(5, 30), r.randint(2, 9)
    return {"a": a, "b": b, "c": c, "d": d}, a * b + c * d


def _share_equally(r: random.Random) -> tuple[Values, int]:
    b, each = r.randint(2, 9), r.randint(3, 25)
    return {"a": b * each, "b": b}, each


def _change_back(r: random.Random) -> tuple[Values, int]:
    a, b = r.randint(4, 25), r.randint(2, 6)
    c = (a * b // 20 + 1 + r.randint(0, 2)) * 20
    return {"a": a, "b": b, "c": c}, c - a * b


def _weekly_savings(r: random.Random) -> tuple[Values, int]:
    a, b = r.randint(5, 30), r.randint(4, 15)
    c = r.randint(10, a * b - 1)
    return {"a": a, "b": b, "c": c}, a * b - c


def _percent_off(r: random.Random) -> tuple[Values, int]:
    a, b = 20 * r.randint(2, 30), r.choice((10, 15, 20, 25, 30, 40, 50))
    return {"a": a, "b": b}, a * (100 - b) // 100


def _two_legs(r: random.Random) -> tuple[Values, int]:
    a, b, c, d = r.randint(40, 120), r.randint(1, 5), r.randint(40, 120), r.randint(1, 5)
    return {"a": a, "b": b, "c": c, "d": d}, a * b + c * d


FORMULAS: dict[str, Callable[[random.Random], tuple[Values, int]]] = {
    "buy_packs_give": _buy_packs_give,
    "trays_sold": _trays_sold,
    "two_rates": _two_rates,
    "share_equally": _share_equally,
    "change_back": _change_back,
    "weekly_savings": _weekly_savings,
    "percent_off": _percent_off,
    "two_legs": _two_legs,
}
"""Formula name (as the templates refer to it) -> draws quantities and returns the answer."""


def arithmetic_problem(rng: random.Random, problem_id: str) -> Problem:
    """An arithmetic word problem from a random template, name, item and quantities."""
    data = _data()
    template = rng.choice(data["arithmetic"])
    values, answer = FORMULAS[template["formula"]](rng)
    words = {"name": rng.choice(data["names"]), "item": rng.choice(data["items"])}
    words.update(baked=rng.choice(data["baked"]), goods=rng.choice(data["goods"]))
    question = template["text"].format(**words, **values)
    return Problem(
        id=problem_id, source="generated", kind="math", question=question, answer=str(answer)
    )


# --- linear equations ----------------------------------------------------------------------


def _term(coef: int, var: str) -> str:
    return {1: var, -1: f"-{var}"}.get(coef, f"{coef}{var}")


def _plus(expr: str, const: int) -> str:
    if const == 0:
        return expr
    return f"{expr} + {const}" if const > 0 else f"{expr} - {-const}"


def _nonzero(rng: random.Random, low: int, high: int) -> int:
    return rng.choice([k for k in range(low, high + 1) if k != 0])


def linear_equation(rng: random.Random, var: str) -> tuple[str, str, Fraction]:
    """A random linear equation (left side, right side) and its exact solution."""
    q = rng.choice((1, 1, 1, 2, 3))
    x = Fraction(_nonzero(rng, -12, 12), q)
    form = rng.randrange(3)
    if form == 0:  # ax + b = c
        a, b = q * _nonzero(rng, -4, 4), rng.randint(-20, 20)
        return _plus(_term(a, var), b), str(a * x + b), x
    if form == 1:  # a(x + b) = c, with integer c
        a, b = q * _nonzero(rng, -3, 3), rng.randint(-9, 9)
        inner = _plus(var, b)
        lhs = f"{'-' if a == -1 else a}({inner})" if b and a != 1 else _term(a, var)
        lhs = inner if a == 1 else lhs
        return lhs, str(a * (x + b)), x
    a, d = _nonzero(rng, -6, 6), 0  # ax + b = dx + e
    while d in (0, a) or (a - d) % q:
        d = _nonzero(rng, -6, 6)
    b = rng.randint(-15, 15)
    return _plus(_term(a, var), b), _plus(_term(d, var), int((a - d) * x + b)), x


def linear_problem(rng: random.Random, problem_id: str) -> Problem:
    """A linear equation in one unknown with an integer or simple fractional solution."""
    var = rng.choice("xxxynt")
    lhs, rhs, x = linear_equation(rng, var)
    question = rng.choice(_data()["linear"]).format(v=var, lhs=lhs, rhs=rhs)
    return Problem(id=problem_id, source="generated", kind="math", question=question, answer=str(x))


# --- logic puzzles: ordering ---------------------------------------------------------------

Clue = tuple[Any, ...]
Order = tuple[str, ...]


def _clue_holds(clue: Clue, order: Order) -> bool:
    kind, x = clue[0], order.index(clue[1])
    if kind == "before":
        return x < order.index(clue[2])
    if kind == "right_before":
        return x + 1 == order.index(clue[2])
    if kind == "not_at":
        return x != clue[2]
    return x == clue[2]  # "at"


def _clue_text(clue: Clue, verb: str, n: int) -> str:
    kind, who = clue[0], clue[1]
    if kind == "before":
        return f"{who} {verb} before {clue[2]}."
    if kind == "right_before":
        return f"{who} {verb} immediately before {clue[2]}."
    where = "last" if clue[2] == n - 1 else _ORDINALS[clue[2]]
    return f"{who} {verb} {where}." if kind == "at" else f"{who} was not {where}."


def _random_clue(rng: random.Random, truth: Order) -> Clue:
    kind = rng.choice(("before", "before", "right_before", "not_at", "not_at", "at"))
    x, y = rng.sample(truth, 2)
    i = truth.index(x)
    if kind == "before":
        return ("before", x, y) if i < truth.index(y) else ("before", y, x)
    if kind == "right_before":
        return ("right_before", truth[i], truth[i + 1]) if i + 1 < len(truth) else ("at", x, i)
    if kind == "not_at":
        return ("not_at", x, rng.choice([k for k in range(len(truth)) if k != i]))
    return ("at", x, i)


def solve_ordering(people: Sequence[str], clues: Sequence[Clue]) -> list[Order]:
    """Every order of `people` that satisfies all clues (brute force)."""
    return [o for o in itertools.permutations(people) if all(_clue_holds(c, o) for c in clues)]


def _prune(people: Sequence[str], clues: list[Clue]) -> list[Clue]:
    """Drop clues the others already imply, keeping the solution unique."""
    kept = list(clues)
    for clue in clues:
        rest = [c for c in kept if c != clue]
        if len(solve_ordering(people, rest)) == 1:
            kept = rest
    return kept


def ordering_problem(rng: random.Random, problem_id: str) -> Problem:
    """Who came k-th, given relative-order clues; exactly one order fits them."""
    data = _data()
    n = rng.choice((4, 4, 5))
    truth: Order = tuple(rng.sample(data["names"], n))
    asked = rng.randrange(n)
    clues: list[Clue] = []
    while len(solve_ordering(truth, clues)) > 1:
        clue = _random_clue(rng, truth)
        if clue == ("at", truth[asked], asked):
            continue
        if len(solve_ordering(truth, [*clues, clue])) < len(solve_ordering(truth, clues)):
            clues.append(clue)
    clues = _prune(truth, clues)
    (solution,) = solve_ordering(truth, clues)
    event = rng.choice(data["ordering"]["events"])
    roster = ", ".join(sorted(truth)[:-1]) + f" and {sorted(truth)[-1]}"
    lines = [event["setting"].format(n=_COUNTS[n]) + f": {roster}."]
    lines += [_clue_text(c, event["noun"], n) for c in clues]
    lines.append(event["question"].format(pos="last" if asked == n - 1 else _ORDINALS[asked]))
    others = rng.sample([p for p in truth if p != solution[asked]], 3)
    return _choice_problem(rng, problem_id, " ".join(lines), solution[asked], others)


def _choice_problem(
    rng: random.Random, problem_id: str, question: str, right: str, wrong: list[str]
) -> Problem:
    options = [right, *wrong]
    rng.shuffle(options)
    return Problem(
        id=problem_id,
        source="generated",
        kind="choice",
        question=question,
        answer=letter(options.index(right)),
        choices=options,
    )


# --- logic puzzles: knights and knaves ------------------------------------------------------

World = dict[str, bool]  # name -> is a knight


def _statement_true(statement: Clue, world: World) -> bool:
    kind = statement[0]
    if kind == "knight":
        return world[statement[1]]
    if kind == "knave":
        return not world[statement[1]]
    if kind == "same":
        return world[statement[1]] == world[statement[2]]
    if kind == "differ":
        return world[statement[1]] != world[statement[2]]
    if kind == "some_knave":
        return not all(world.values())
    return sum(world.values()) == statement[1]  # "exactly_knights"


def _statement_text(statement: Clue) -> str:
    kind = statement[0]
    if kind in ("knight", "knave"):
        return f"{statement[1]} is a {kind}."
    if kind == "same":
        return f"{statement[1]} and {statement[2]} are the same kind."
    if kind == "differ":
        return f"{statement[1]} and {statement[2]} are different kinds."
    if kind == "some_knave":
        return "At least one of us is a knave."
    count = statement[1]
    return f"Exactly {'one of us is a knight' if count == 1 else 'two of us are knights'}."


def _random_statement(rng: random.Random, speaker: str, people: Sequence[str]) -> Clue:
    others = [p for p in people if p != speaker]
    kind = rng.choice(("knight", "knave", "same", "differ", "some_knave", "exactly_knights"))
    if kind in ("knight", "knave"):
        return (kind, rng.choice(others))
    if kind in ("same", "differ"):
        return (kind, *rng.sample(others if len(others) > 1 else people, 2))
    return (kind,) if kind == "some_knave" else (kind, rng.choice((1, 2)))


def solve_knights(people: Sequence[str], said: Sequence[tuple[str, Clue]]) -> list[World]:
    """Every knight/knave assignment in which knights' statements hold and knaves' fail."""
    worlds = [
        dict(zip(people, kinds, strict=True))
        for kinds in itertools.product((True, False), repeat=len(people))
    ]
    return [w for w in worlds if all(_statement_true(s, w) == w[who] for who, s in said)]


def _world_text(world: World) -> str:
    parts = [f"{p} is a {'knight' if k else 'knave'}" for p, k in world.items()]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}"


def knights_problem(rng: random.Random, problem_id: str) -> Problem:
    """Three islanders make statements; exactly one knight/knave assignment fits them."""
    people = rng.sample(_data()["names"], 3)
    while True:
        said = [(p, _random_statement(rng, p, people)) for p in people]
        worlds = solve_knights(people, said)
        if len(worlds) == 1:
            break
    setting = _data()["knights"]["setting"].format(
        people=", ".join(people[:2]) + f" and {people[2]}"
    )
    quotes = [f'{who} says: "{_statement_text(s)}"' for who, s in said]
    question = " ".join([setting, *quotes, _data()["knights"]["question"]])
    wrong_worlds = [
        dict(zip(people, kinds, strict=True))
        for kinds in itertools.product((True, False), repeat=3)
    ]
    wrong = [_world_text(w) for w in wrong_worlds if w != worlds[0]]
    return _choice_problem(rng, problem_id, question, _world_text(worlds[0]), rng.sample(wrong, 3))


def logic_problem(rng: random.Random, problem_id: str) -> Problem:
    """An ordering puzzle or a knights-and-knaves puzzle, multiple choice with four options."""
    make = ordering_problem if rng.random() < 0.5 else knights_problem
    return make(rng, problem_id)


_GENERATORS: dict[str, Callable[[random.Random, str], Problem]] = {
    "arithmetic": arithmetic_problem,
    "linear": linear_problem,
    "logic": logic_problem,
}
