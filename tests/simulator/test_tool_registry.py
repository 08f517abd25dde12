import pytest

from metasre.simulator import TOOLS
from metasre.simulator.errors import InvalidToolCallError, UnknownToolError
from metasre.simulator.tools import get_tool, validate_args

REQUIRED = {
    "view_file",
    "list_files",
    "edit_lines",
    "read_logs",
    "query_metrics",
    "get_alerts",
    "check_dependencies",
    "run_tests",
    "git_blame",
    "git_diff",
    "rollback_migration",
    "rollback_deployment",
    "restart_service",
    "scale_service",
    "ask_hint",
    "send_message",
    "submit_report",
}


def test_every_required_tool_is_registered_with_a_description_and_cost():
    assert set(TOOLS) >= REQUIRED
    for tool in TOOLS.values():
        assert len(tool.description) > 40, tool.name
        assert tool.minutes > 0
        schema = tool.json_schema()
        assert schema["type"] == "object" and schema["additionalProperties"] is False


def test_unknown_tool_names_the_close_match_and_all_choices():
    with pytest.raises(UnknownToolError) as info:
        get_tool("read_log")
    assert "did you mean read_logs" in str(info.value)
    assert "submit_report" in info.value.choices


def test_bad_arguments_list_each_violation_with_allowed_values():
    with pytest.raises(InvalidToolCallError) as info:
        validate_args(TOOLS["run_tests"], {"suite": "smoke", "bogus": 1})
    fields = dict(info.value.violations)
    assert "unit" in fields["suite"] and "security" in fields["suite"]
    assert "unknown argument" in fields["bogus"]


@pytest.mark.parametrize("args", [[1, 2], "text", 3])
def test_non_object_arguments_are_refused(args):
    with pytest.raises(InvalidToolCallError, match="must be an object"):
        validate_args(TOOLS["get_alerts"], args)


def test_whole_floats_are_accepted_for_integers_as_json_clients_send_them():
    parsed = validate_args(TOOLS["scale_service"], {"service": "x", "replicas": 4.0})
    assert parsed.replicas == 4  # type: ignore[attr-defined]
