import importlib.util
from pathlib import Path

import pytest

from rapport.envs.collab import Problem, ProblemSourceError, is_correct, load_problems
from rapport.envs.collab._problems import stated_answer


def math(answer: str) -> Problem:
    return Problem(id="p", source="t", kind="math", question="q", answer=answer)


def choice(answer: str) -> Problem:
    return Problem(
        id="c",
        source="t",
        kind="choice",
        question="q",
        answer=answer,
        choices=["red", "green", "blue", "yellow"],
    )


needs_mmath = pytest.mark.skipif(
    importlib.util.find_spec("mmath") is None, reason="MATH-500 is the optional extra math500"
)


@needs_mmath
def test_math500_has_311_problems_and_samples_deterministically() -> None:
    everything = load_problems("math500", 311, seed=0)
    assert len({p.id for p in everything}) == 311
    assert all(p.kind == "math" and p.answer for p in everything)
    first = load_problems("math500", 5, seed=3)
    assert [p.id for p in first] == [p.id for p in load_problems("math500", 5, seed=3)]
    assert [p.id for p in first] != [p.id for p in load_problems("math500", 5, seed=4)]


@needs_mmath
def test_math500_gold_answers_grade_as_correct() -> None:
    for problem in load_problems("math500", 40, seed=1):
        assert is_correct(problem, f"So we get \\boxed{{{problem.answer}}}."), problem.answer


@needs_mmath
def test_too_many_problems_is_an_error() -> None:
    with pytest.raises(ProblemSourceError, match="311"):
        load_problems("math500", 400, seed=0)


def test_unknown_source_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ProblemSourceError, match=r"nope\.json"):
        load_problems(str(missing), 1, seed=0)
    with pytest.raises(ProblemSourceError, match="unknown generated family"):
        load_problems("generated:poetry", 1, seed=0)


@pytest.mark.parametrize(
    ("gold", "text"),
    [
        ("\\frac{1}{2}", "The answer is $0.5$."),
        ("\\frac{1}{2}", "Final answer: \\boxed{\\dfrac{1}{2}}"),
        ("12", "First 3 + 4 = 7, then 7 + 5 = 12"),
        ("-7/3", "so x = \\boxed{-\\frac{7}{3}}"),
        ("2\\sqrt{3}", "\\boxed{\\sqrt{12}}"),
        ("1,000", "It comes to 1000 in total."),
        ("(3, \\frac{\\pi}{2})", "In polar form: \\boxed{\\left(3, \\frac{\\pi}{2}\\right)}"),
    ],
)
def test_math_answers_match_symbolically(gold: str, text: str) -> None:
    assert is_correct(math(gold), text)


@pytest.mark.parametrize(
    ("gold", "text"),
    [
        ("12", "The answer is 13."),
        ("\\frac{1}{2}", "\\boxed{2}"),
        ("5", "I am not sure."),
        ("5", ""),
    ],
)
def test_wrong_math_answers_are_rejected(gold: str, text: str) -> None:
    assert not is_correct(math(gold), text)


@pytest.mark.parametrize(
    "text",
    [
        "B",
        "(B)",
        "Answer: B",
        "The answer is (B).",
        "b) green",
        "**B**",
        "I'd go with option B.",
        "The correct choice is B because the others fail.",
        "\\boxed{B}",
        "It is green.",
    ],
)
def test_choice_letter_extraction(text: str) -> None:
    assert is_correct(choice("B"), text)


@pytest.mark.parametrize("text", ["A", "(C)", "Answer: D", "The answer is a) red", "", "It is E."])
def test_wrong_choices_are_rejected(text: str) -> None:
    assert not is_correct(choice("B"), text)


@needs_mmath
def test_a_finite_source_smaller_than_the_request_gives_all_of_it_when_allowed() -> None:
    from rapport.envs.collab import ProblemSourceError, load_problems

    with pytest.raises(ProblemSourceError):
        load_problems("math500", 400, seed=1)
    pool = load_problems("math500", 400, seed=1, allow_fewer=True)
    assert len(pool) == 311 and len({p.id for p in pool}) == 311


SOLVED = (
    "### Solving the Equation 2x - 1 = -23\n\n1. **Add 1 to both sides**:\n"
    "   \\[ 2x = -22 \\]\n2. **Divide both sides by 2**:\n   \\[ x = -11 \\]\n\n"
    "So, the solution to the equation \\( 2x - 1 = -23 \\) is:\n\\[ x = -11 \\]"
)


@pytest.mark.parametrize(
    ("gold", "text"),
    [
        ("-11", SOLVED),  # the conclusion hands over to the next line
        ("-11", "So the solution of 2x - 1 = -23 is x = -11."),
        ("-11", "Therefore, 2x = -22 and x = -11."),
        ("3/4", "Hence \\( y = \\frac{3}{4} \\), which we can check by substitution."),
        ("1000", "So x = 1,000 units."),
        ("42", "So, the answer is:\n\n**42**"),
        ("7", "Thus the total is 7 apples."),
    ],
)
def test_the_stated_answer_is_the_value_the_conclusion_gives(gold: str, text: str) -> None:
    stated = stated_answer(math(gold), text)
    assert stated is not None and is_correct(math(gold), stated), stated


def test_a_loose_reading_prefers_the_variable_s_value_to_the_last_number() -> None:
    text = "Adding 1 gives 2x = -22, and dividing, x = -11; check: 2(-11) - 1 = -23"
    assert stated_answer(math("-11"), text, loose=True) == "-11"
