import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.envs.collab import is_correct, load_problems
from rapport.envs.collab._generated import solve_knights, solve_ordering


def test_generated_mixes_three_families_deterministically() -> None:
    problems = load_problems("generated", 30, seed=5)
    families = {p.id.split("-")[1] for p in problems}
    assert families == {"arithmetic", "linear", "logic"}
    again = load_problems("generated", 30, seed=5)
    assert [p.model_dump() for p in problems] == [p.model_dump() for p in again]
    other = load_problems("generated", 30, seed=6)
    assert [p.question for p in problems] != [p.question for p in other]


def test_more_problems_keep_the_first_ones() -> None:
    assert load_problems("generated", 10, 1) == load_problems("generated", 25, 1)[:10]


def test_questions_are_varied() -> None:
    problems = load_problems("generated:arithmetic", 60, seed=0)
    assert len({p.question for p in problems}) == 60
    openings = {" ".join(p.question.split()[:3]) for p in problems}
    assert len(openings) > 10


def _solve_linear(question: str) -> Fraction:
    """An independent check: evaluate both sides at two points and solve the line."""
    match = re.search(
        r"([a-z])(?:: | that satisfies | makes the equation )(.+?) = (.+?)(?:\.| true)", question
    )
    assert match, question
    var, lhs, rhs = match.groups()

    def side(expr: str, value: Fraction) -> Fraction:
        expr = re.sub(r"(\d)\(", r"\1*(", expr.replace(var, f"*({value})"))
        expr = re.sub(r"(^|[(\s-])\*", r"\1", expr)
        tokens = re.findall(r"\d+|[-+*/()]", expr.replace(" ", ""))
        return Fraction(_evaluate(tokens))

    f0 = side(lhs, Fraction(0)) - side(rhs, Fraction(0))
    f1 = side(lhs, Fraction(1)) - side(rhs, Fraction(1))
    return -f0 / (f1 - f0)


def _evaluate(tokens: list[str]) -> Fraction:
    """A tiny recursive-descent evaluator for + - * / and parentheses."""
    pos = 0

    def expr() -> Fraction:
        nonlocal pos
        value = term()
        while pos < len(tokens) and tokens[pos] in "+-":
            op = tokens[pos]
            pos += 1
            value = value + term() if op == "+" else value - term()
        return value

    def term() -> Fraction:
        nonlocal pos
        value = factor()
        while pos < len(tokens) and tokens[pos] in "*/":
            op = tokens[pos]
            pos += 1
            value = value * factor() if op == "*" else value / factor()
        return value

    def factor() -> Fraction:
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "-":
            return -factor()
        if token == "(":
            value = expr()
            pos += 1
            return value
        return Fraction(int(token))

    return expr()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000))
def test_linear_answers_solve_the_equation(seed: int) -> None:
    (problem,) = load_problems("generated:linear", 1, seed)
    assert Fraction(problem.answer) == _solve_linear(problem.question)
    assert is_correct(problem, f"So the solution is \\boxed{{{problem.answer}}}.")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_logic_puzzles_have_one_lettered_answer(seed: int) -> None:
    (problem,) = load_problems("generated:logic", 1, seed)
    assert problem.kind == "choice"
    assert len(problem.choices) == 4 and len(set(problem.choices)) == 4
    assert problem.answer in "ABCD"
    assert is_correct(problem, f"The answer is ({problem.answer}).")
    wrong = next(x for x in "ABCD" if x != problem.answer)
    assert not is_correct(problem, f"The answer is ({wrong}).")


def test_arithmetic_answers_are_non_negative_integers() -> None:
    for problem in load_problems("generated:arithmetic", 200, seed=2):
        assert problem.answer.isdigit(), problem


def test_solvers_find_the_unique_world() -> None:
    people = ["Ann", "Bo", "Cy"]
    said = [("Ann", ("knave", "Bo")), ("Bo", ("same", "Ann", "Cy")), ("Cy", ("knight", "Ann"))]
    worlds = solve_knights(people, said)
    for world in worlds:
        # Check the definition directly: knights say true things, knaves false ones.
        assert world["Ann"] == (not world["Bo"])
        assert world["Bo"] == (world["Ann"] == world["Cy"])
        assert world["Cy"] == world["Ann"]
    orders = solve_ordering(["A", "B", "C"], [("before", "A", "B"), ("at", "C", 0)])
    assert orders == [("C", "A", "B")]


@pytest.mark.parametrize("family", ["arithmetic", "linear", "logic"])
def test_any_number_of_problems(family: str) -> None:
    problems = load_problems(f"generated:{family}", 150, seed=9)
    assert len(problems) == 150 and len({p.id for p in problems}) == 150
