from __future__ import annotations

from rapport.train import ReflectionExample
from rapport.train._prompts import reflection_prompt


class WordTokenizer:
    """Counts whitespace words of the rendered chat as tokens."""

    def apply_chat_template(self, messages, **_kwargs):
        return " ".join(m["content"] for m in messages).split()


def test_long_transcripts_lose_their_oldest_lines_to_fit_the_budget():
    lines = [f"[turn {i}] USER: message number {i} with some words" for i in range(200)]
    example = ReflectionExample(
        id="r/c/u/0", user_id="u", condition="c", session_index=0, transcript="\n".join(lines)
    )
    tokenizer = WordTokenizer()
    full = reflection_prompt(example, tokenizer, max_tokens=100_000)
    budget = len(tokenizer.apply_chat_template(full)) // 2
    fitted = reflection_prompt(example, tokenizer, max_tokens=budget)
    text = fitted[-1]["content"]
    assert len(tokenizer.apply_chat_template(fitted)) <= budget
    assert "[turn 199]" in text and "[turn 0]" not in text
    assert "[earlier turns omitted]" in text
