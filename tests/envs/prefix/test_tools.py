"""Interaction tools: the paper's structured fields, required ones validated."""

from __future__ import annotations

from rapport.envs.prefix import get_tool, interaction_tools

FUNCTIONS = {"mkdir", "mv", "ls"}

PAPER_REQUIRED = {
    "Message_tool_invocation": ["detailed_function", "execution_function"],
    "Message_tool_invocation_logic": ["execution_function", "reasoning"],
    "Message_display_params": ["execution_function", "param_names", "param_values"],
    "Message_source_report": ["detailed_function"],
    "Message_show_sequential_output": [],
    "Message_show_layered_presentation": [],
    "Message_tool_failure_notice": ["execution_function"],
    "Message_tool_failure_logic": ["execution_function", "reasoning"],
    "Message_confirmation": ["execution_function"],
    "Message_information_seeking": ["missing_fields"],
    "Message_disambiguation": ["options"],
    "Message_tool_switch_notice": ["detailed_function", "execution_function"],
    "Message_tool_abort": ["execution_function"],
}


def test_every_paper_tool_is_there_with_its_required_fields() -> None:
    tools = {t.paper_name: t for t in interaction_tools()}
    assert {name: tools[name].required for name in PAPER_REQUIRED} == PAPER_REQUIRED
    for tool in interaction_tools():
        spec = tool.spec()
        assert spec.parameters["required"] == tool.required
        assert set(spec.parameters["properties"]) == set(tool.fields)


def test_a_call_missing_a_required_field_or_naming_an_unknown_function_is_invalid() -> None:
    confirm = get_tool("confirmation")
    assert confirm.validate_call({"execution_function": "mkdir"}, FUNCTIONS) is None
    assert "required field 'execution_function'" in str(confirm.validate_call({}, FUNCTIONS))
    bad = confirm.validate_call({"execution_function": "rm"}, FUNCTIONS)
    assert "not one of this task's functions" in str(bad)
    assert "unknown field" in str(confirm.validate_call({"question": "ok?"}, FUNCTIONS))
    qualified = {"execution_function": "GorillaFileSystem.mkdir(dir_name='x')"}
    assert confirm.validate_call(qualified, FUNCTIONS) is None


def test_a_disambiguation_offers_two_readings_at_least() -> None:
    tool = get_tool("disambiguation")
    assert tool.validate_call({"options": "report.txt or notes.txt"}, FUNCTIONS) is None
    assert "at least two" in str(tool.validate_call({"options": "report.txt"}, FUNCTIONS))
