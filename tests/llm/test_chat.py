from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rapport.llm import Message, ToolCall
from rapport.llm._chat import chat_messages, parse_tool_calls


def test_tagged_tool_calls_are_parsed_and_the_rest_is_text() -> None:
    text = (
        "Let me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n'
        "</tool_call>\n<tool_call>\n"
        '{"name": "get_time", "arguments": {}}\n</tool_call>'
    )
    rest, calls = parse_tool_calls(text)
    assert rest == "Let me check."
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris", "days": 2}),
        ("get_time", {}),
    ]
    assert calls[0].id != calls[1].id


def test_call_ids_are_stable_across_parses() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
    assert parse_tool_calls(text)[1][0].id == parse_tool_calls(text)[1][0].id


def test_an_unclosed_call_at_the_end_of_the_reply_still_counts() -> None:
    rest, calls = parse_tool_calls('<tool_call>\n{"name": "f", "arguments": {"q": "a b"}}')
    assert rest == "" and calls[0].arguments == {"q": "a b"}


def test_a_broken_call_stays_visible_in_the_text() -> None:
    text = "<tool_call>{'name': 'f', 'arguments': __import__('os')}</tool_call> done"
    rest, calls = parse_tool_calls(text)
    assert calls == []
    assert "__import__" in rest and "done" in rest


def test_arguments_given_as_a_json_string_are_decoded() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "f", "arguments": "{\\"n\\": 3}"}</tool_call>')
    assert calls[0].arguments == {"n": 3}


def test_an_untagged_call_counts_only_when_it_names_an_offered_tool() -> None:
    reply = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert parse_tool_calls(reply, ["get_weather"])[1][0].arguments == {"city": "Paris"}
    rest, calls = parse_tool_calls(reply, ["search"])
    assert calls == [] and rest == reply
    assert parse_tool_calls(reply)[1] == []


def test_messages_carry_tool_calls_in_the_openai_shape() -> None:
    call = ToolCall(id="call_1", name="f", arguments={"x": [1, 2]})
    wire = chat_messages(
        [
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="3", tool_call_id="call_1"),
        ],
        arguments_as_json=True,
    )
    assert wire[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": [1, 2]}'}
    assert wire[1] == {"role": "tool", "content": "3", "tool_call_id": "call_1"}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    name=st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=10), _json_values, max_size=4),
    before=st.text(alphabet=st.characters(blacklist_characters="<"), max_size=30),
)
def test_any_rendered_call_round_trips(name: str, arguments: dict[str, Any], before: str) -> None:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    rest, calls = parse_tool_calls(f"{before}<tool_call>\n{body}\n</tool_call>")
    assert rest == before.strip()
    assert [(c.name, c.arguments) for c in calls] == [(name, arguments)]


def test_a_bare_call_followed_by_an_invented_tool_response_is_still_a_call() -> None:
    text = '{"name": "cd", "arguments": {"folder": "docs"}}\n<tool_response>ok</tool_response>'
    rest, calls = parse_tool_calls(text, ["cd"])
    assert [(c.name, c.arguments) for c in calls] == [("cd", {"folder": "docs"})]
    assert rest == ""


def test_bare_calls_one_per_line_are_all_calls() -> None:
    text = (
        '{"name": "login", "arguments": {}}\n'
        '{"name": "book", "arguments": {"to": "Paris"}}\n'
        '[{"name": "pay", "arguments": {"card": "1"}}]'
    )
    rest, calls = parse_tool_calls(text, ["login", "book", "pay"])
    assert [(c.name, c.arguments) for c in calls] == [
        ("login", {}),
        ("book", {"to": "Paris"}),
        ("pay", {"card": "1"}),
    ]
    assert rest == ""


def test_a_last_bare_call_cut_by_the_token_budget_is_dropped() -> None:
    whole = '{"name": "book", "arguments": {"to": "Paris"}}\n'
    for cut in ('{"name": "book", "arguments": {"to": "Par', '{"name": "book", "argu', "{"):
        rest, calls = parse_tool_calls(whole + cut, ["book"])
        assert [(c.name, c.arguments) for c in calls] == [("book", {"to": "Paris"})], cut
        assert rest == ""


def test_bare_calls_followed_by_anything_else_stay_text() -> None:
    whole = '{"name": "book", "arguments": {"to": "Paris"}}\n'
    for tail in (
        "Done, the flight is booked.",
        '{"name": "book", "arguments": {"to": 3 "x"}} more',
        '{"name": "unknown", "arguments": {}}',
        '{"name": "book", "arguments": "not json"}',
    ):
        text = whole + tail
        assert parse_tool_calls(text, ["book"]) == (text.strip(), []), tail
    assert parse_tool_calls('{"name": "book", "argu', ["book"]) == ('{"name": "book", "argu', [])


def test_call_arguments_that_are_not_an_object_make_no_call() -> None:
    for arguments in ("[1, 2]", "3", '"x"', "true"):
        text = f'{{"name": "book", "arguments": {arguments}}}'
        assert parse_tool_calls(text, ["book"]) == (text, []), arguments
        tagged = f"<tool_call>{text}</tool_call>"
        assert parse_tool_calls(tagged, ["book"]) == (tagged, []), arguments
