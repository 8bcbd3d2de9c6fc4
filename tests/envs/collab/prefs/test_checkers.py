import pytest

from rapport.envs.collab import (
    CHECKERS,
    check_preference,
    count_sentences,
    is_clarifying_question,
    load_taxonomy,
)

SOLUTION = "Subtract 3 from both sides to get 2x = 8. Divide by 2, so x = 4."

# checker -> (texts it accepts, texts it rejects)
EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "no_preamble": (
        [
            SOLUTION,
            "x = 4, because 2x = 8.",
            "Which variable should I solve for?",
            "To isolate x, subtract 3 from both sides: 2x = 8.",
        ],
        [
            "Great question! " + SOLUTION,
            "Sure, let me help. " + SOLUTION,
            "Let's break this down. " + SOLUTION,
            "I'd be happy to help with that. " + SOLUTION,
            "Thanks for asking. " + SOLUTION,
            "To solve the equation 2x + 3 = 11, we need to isolate x. " + SOLUTION,
            "Let's solve this step by step. " + SOLUTION,
            "Here's how to do it:\n" + SOLUTION,
        ],
    ),
    "has_pleasantry": (
        [SOLUTION + " Hope this helps!", "Thanks for the details. " + SOLUTION],
        [SOLUTION, "x = 4."],
    ),
    "no_pleasantry": (
        [SOLUTION, "x = 4."],
        [SOLUTION + " Good luck with the rest!", "Great question. x = 4."],
    ),
    "ends_with_next_step": (
        [
            SOLUTION + "\n\nAs a next step, try solving 5x - 2 = 13 on your own.",
            SOLUTION + " You could also try checking the result by substitution.",
            SOLUTION + "\n\nI suggest practising two more equations of this kind.",
            SOLUTION + "\nNext, you could graph it.\nTL;DR: x = 4\nConfidence: 90%",
        ],
        [SOLUTION, "I suggest we start with step 1. x = 4. Done."],
    ),
    "no_suggestion": (
        [SOLUTION, "The answer is B."],
        [SOLUTION + " Next, you could try a harder one.", "I recommend graphing it. " + SOLUTION],
    ),
    "ends_with_check_in": (
        [
            "First, subtract 3 from both sides: 2x = 8. Does that make sense so far?",
            "Step one gives 2x = 8. Shall we go on to the next step?",
            "That isolates the x term. Ready to continue?",
        ],
        [SOLUTION, "Why is x equal to 4? Because 2x = 8."],
    ),
    "key_takeaways": (
        [
            SOLUTION + "\n\n**Key takeaways:**\n- Undo addition first.\n- Then undo the product.",
            SOLUTION + "\n\nIn summary: isolate x by undoing operations in reverse order.",
            SOLUTION + "\n\n## Key points\n- Inverse operations.",
            "First, subtract 3 from both sides. Shall we continue?",  # not winding down yet
        ],
        [SOLUTION, SOLUTION + "\n\nKey takeaways:", "The answer is 4."],
    ),
    "outline_first": (
        [
            "Outline: isolate the x term, then divide.\n\n" + SOLUTION,
            "Here's the plan:\n1. Move the constant.\n2. Divide.\n\n" + SOLUTION,
            "## Plan\nFirst we isolate x, then we check.\n\n" + SOLUTION,
            "I'll cover two things: the algebra and a check.\n\n" + SOLUTION,
        ],
        [SOLUTION, "- Subtract 3.\n- Divide by 2."],
    ),
    "example_or_analogy": (
        [
            SOLUTION + " For example, 2 times 4 plus 3 is 11.",
            "Think of the equation as a balance scale: do the same to both pans. " + SOLUTION,
            "Imagine you owe 3 dollars. " + SOLUTION,
        ],
        [SOLUTION, "x = 4."],
    ),
    "max_three_sentences": (
        [SOLUTION, "x = 4.", "The value is 3.14 approx. in total. E.g. it is pi. Done."],
        [
            SOLUTION + " Check: 2(4) + 3 = 11. It works.",
            "- one\n- two\n- three\n- four",
            "One. Two. Three. Four.",
        ],
    ),
    "bullets": (
        [
            "- Subtract 3.\n- Divide by 2.",
            "Steps:\n* move the 3\n* divide\n\nDone.",
            "- Just one bullet.",  # MSC: one list item is enough
            "1. First\n2. Second",  # MSC: numbered items count
        ],
        [SOLUTION, "Subtract 3.\nDivide by 2."],
    ),
    "numbered_steps": (
        ["1. Subtract 3.\n2. Divide by 2.", "Step 1: subtract.\nStep 2: divide.", "1) a\n2) b"],
        [SOLUTION, "- a\n- b", "1. Only one step."],
    ),
    "headings": (
        ["## Solution\n" + SOLUTION, "**Answer**\n" + SOLUTION, "# Step 1\nDo it."],
        [SOLUTION, "The **answer** is 4.", "#hashtag is not a heading"],
    ),
    "tldr_end": (
        [SOLUTION + "\n\nTL;DR: x = 4.", SOLUTION + "\n**TL;DR** subtract then divide: x = 4"],
        [SOLUTION, "TL;DR: x = 4.\n\n" + SOLUTION, SOLUTION + "\nTL;DR:"],
    ),
    "confidence": (
        [
            SOLUTION + "\n\nConfidence: 95%",
            SOLUTION + " I'm fairly confident (~70%).",
            SOLUTION + " Confidence level: high.",
            "x = 4, and I am 90% sure of it.",
            "Which unit do you want the answer in?",  # no answer given yet: nothing to rate
        ],
        [SOLUTION, "The answer is 4. This confidence interval is wide.", "\\boxed{4}"],
    ),
}


def test_every_checker_has_examples() -> None:
    assert set(EXAMPLES) == set(CHECKERS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_checker_accepts_positive_examples(name: str) -> None:
    for text in EXAMPLES[name][0]:
        assert CHECKERS[name](text), text


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_checker_rejects_negative_examples(name: str) -> None:
    for text in EXAMPLES[name][1]:
        assert not CHECKERS[name](text), text


def test_check_preference_uses_the_taxonomy_checker() -> None:
    assert check_preference("bullet_points", "- a\n- b") is True
    assert check_preference("bullet_points", SOLUTION) is False
    assert check_preference("blunt", "Thanks! x = 4.") is False


def test_check_preference_is_none_when_code_cannot_decide() -> None:
    uncheckable = [p.id for p in load_taxonomy().preferences if p.checker is None]
    assert uncheckable
    for pref_id in uncheckable:
        assert check_preference(pref_id, SOLUTION) is None


def test_check_preference_unknown_id() -> None:
    with pytest.raises(KeyError):
        check_preference("no_such_pref", "x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pi is about 3.14. It is irrational.", 2),
        ("Dr. Smith, i.e. the tutor, said so. Then e.g. this works.", 2),
        ("The root is $x = 2.5$. Next we check $f(2.5) = 0$.", 2),
        # dots inside display math do not end sentences
        ("Compute\n$$x = 1. y = 2.$$\nThat is all.", 1),
        ("Look at `main.py` and run it. Done!", 2),
        ("Intro line:\n- first item\n- second item. still second\n1. numbered", 5),
        ("## Heading\nOne sentence.", 1),
        ("What? Really! Yes.", 3),
        ("```python\nx = 1. y = 2.\n```\nThe code sets x.", 1),
        ("", 0),
    ],
)
def test_sentence_count(text: str, expected: int) -> None:
    assert count_sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Do you want the answer as a fraction or a decimal?",
        "Before I start, one thing. Is the rate per hour or per day?",
        "Which of the two equations do you mean? The first or the second?",
    ],
)
def test_clarifying_questions(text: str) -> None:
    assert is_clarifying_question(text)


@pytest.mark.parametrize(
    "text",
    [
        SOLUTION,
        "First, subtract 3 from both sides: 2x = 8. Does that make sense?",
        "- Subtract 3\n- Divide by 2\nClear?",
        "The answer is 4. Any questions?",
        "The tank holds 40 litres. It loses 5 an hour. Shall I go on?",
        "",
    ],
)
def test_not_clarifying_questions(text: str) -> None:
    assert not is_clarifying_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Of course! Please provide the problem statement so I can assist you better.",
        "Sure. Could you share the exact equation you are working on?",
        "Happy to help. Please tell me which part is unclear.",
        "Hello, Sam! I'm ready to help you with your argument. What problem is it about?",
    ],
)
def test_a_request_for_the_details_is_a_clarifying_turn(text: str) -> None:
    assert is_clarifying_question(text)


def test_a_request_that_comes_with_a_worked_answer_is_not_clarifying() -> None:
    assert not is_clarifying_question("The answer is x = 5. Please tell me if that helps.")
