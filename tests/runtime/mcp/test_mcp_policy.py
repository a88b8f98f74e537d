"""The pure decisions of an mcp poll: the gate, the result document, error states, backoff, probe validity."""

from __future__ import annotations

import pytest

from attend.runtime.mcp.policy import (
    RESTART_BACKOFF_INITIAL,
    RESTART_BACKOFF_MAX,
    gate_refusal,
    probe_problem,
    restart_delay,
    result_document,
    tool_error_state,
)


def test_the_gate_passes_a_tool_declaring_read_only() -> None:
    assert gate_refusal("t", {"readOnlyHint": True}, listed=True, allow_unannotated=False) is None


@pytest.mark.parametrize("annotations", [None, {}, {"readOnlyHint": None, "title": "T"}])
def test_the_gate_refuses_an_unannotated_tool_unless_overridden(annotations: dict | None) -> None:
    assert "allow_unannotated" in (gate_refusal("t", annotations, listed=True, allow_unannotated=False) or "")
    assert gate_refusal("t", annotations, listed=True, allow_unannotated=True) is None


def test_the_override_never_admits_a_tool_that_declares_it_writes() -> None:
    assert gate_refusal("t", {"readOnlyHint": False}, listed=True, allow_unannotated=True)


@pytest.mark.parametrize("hint", ["true", 1, 1.0, [True], {"value": True}])
def test_only_the_json_value_true_passes_the_gate_even_with_the_override(hint: object) -> None:
    refusal = gate_refusal("t", {"readOnlyHint": hint}, listed=True, allow_unannotated=True)
    assert refusal is not None and "not the JSON value true" in refusal


def test_the_gate_refuses_a_tool_the_server_does_not_list() -> None:
    assert "no tool named" in (gate_refusal("t", None, listed=False, allow_unannotated=True) or "")


def test_structured_content_wins_then_json_text_then_plain_text() -> None:
    assert result_document({"a": 1}, ['{"b": 2}']) == {"a": 1}
    assert result_document(None, ['{"b": 2}']) == {"b": 2}
    assert result_document(None, ["[1,", "2]"]) == [1, 2]
    assert result_document(None, ["plain words"]) == {"text": "plain words"}
    assert result_document(None, []) == {"text": ""}


@pytest.mark.parametrize(
    "message",
    [
        "401 Unauthorized",
        "HTTP 403 Forbidden",
        "invalid_grant: refresh token revoked",
        "Token has expired",
        "missing credentials for slack",
        "Not authenticated. Please log in",
        "authentication required",
        "The API key is invalid",
    ],
)
def test_a_tool_error_about_credentials_is_auth_failed(message: str) -> None:
    assert tool_error_state(message) == "auth_failed"


@pytest.mark.parametrize(
    "message", ["unexpected token < in JSON at position 0", "channel not found", "rate limited, retry in 30s", "timeout 4010ms"]
)
def test_other_tool_errors_are_the_exit_state(message: str) -> None:
    assert tool_error_state(message) == "exit"


def test_restart_backoff_doubles_from_the_initial_wait_up_to_the_cap() -> None:
    assert restart_delay(0) == 0
    assert restart_delay(1) == RESTART_BACKOFF_INITIAL
    assert restart_delay(2) == 2 * RESTART_BACKOFF_INITIAL
    assert restart_delay(3) == 4 * RESTART_BACKOFF_INITIAL
    assert restart_delay(100) == RESTART_BACKOFF_MAX


def test_only_a_passed_confirmed_probe_with_the_current_fingerprint_lets_a_sensor_poll() -> None:
    good = {"fingerprint": "f", "ok": True, "confirmed": True}
    assert probe_problem(good, "f") is None
    assert probe_problem(None, "f") == "not probed yet"
    assert "another server, tool or args" in (probe_problem(good, "g") or "")
    assert "failed" in (probe_problem({**good, "ok": False}, "f") or "")
    assert "not confirmed" in (probe_problem({**good, "confirmed": False}, "f") or "")
