"""Server resolution from Claude Code's configuration: scopes, precedence, expansion, tolerance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attend.errors import RuntimeFailure
from attend.runtime.mcp.servers import (
    ServerDefinition,
    claude_json_path,
    expand_vars,
    fingerprint,
    resolve_server,
    server_label,
)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return {"home": home, "project": project, "env": {"HOME": str(home)}}


def write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc), encoding="utf-8")


def entry(command: str, *args: str, **env: str) -> dict[str, Any]:
    return {"type": "stdio", "command": command, "args": list(args), "env": env}


def resolve(layout: dict[str, Any], server: Any, **env: str) -> ServerDefinition:
    return resolve_server(server, layout["project"], {**layout["env"], **env})


def refusal(layout: dict[str, Any], server: Any, **env: str) -> RuntimeFailure:
    with pytest.raises(RuntimeFailure) as caught:
        resolve(layout, server, **env)
    return caught.value


def test_a_user_scope_server_is_found_in_the_top_level_mcp_servers(layout: dict[str, Any]) -> None:
    write_json(layout["home"] / ".claude.json", {"mcpServers": {"git": entry("uvx", "mcp-server-git")}})
    found = resolve(layout, "git")
    assert (found.command, found.args, found.name) == ("uvx", ("mcp-server-git",), "git")
    assert "user scope" in found.source


def test_the_projects_mcp_json_wins_over_the_user_scope(layout: dict[str, Any]) -> None:
    write_json(layout["home"] / ".claude.json", {"mcpServers": {"git": entry("user-git")}})
    write_json(layout["project"] / ".mcp.json", {"mcpServers": {"git": entry("project-git")}})
    assert resolve(layout, "git").command == "project-git"


def test_the_local_scope_in_claude_json_wins_over_the_projects_mcp_json(layout: dict[str, Any]) -> None:
    write_json(
        layout["home"] / ".claude.json",
        {
            "mcpServers": {"git": entry("user-git")},
            "projects": {str(layout["project"]): {"mcpServers": {"git": entry("local-git")}}},
        },
    )
    write_json(layout["project"] / ".mcp.json", {"mcpServers": {"git": entry("project-git")}})
    found = resolve(layout, "git")
    assert found.command == "local-git"
    assert "local scope" in found.source


def test_another_projects_local_servers_are_not_visible(layout: dict[str, Any]) -> None:
    write_json(layout["home"] / ".claude.json", {"projects": {"/elsewhere": {"mcpServers": {"git": entry("x")}}}})
    assert refusal(layout, "git").state == "invalid"


def test_claude_config_dir_moves_the_user_configuration(layout: dict[str, Any], tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-config"
    config_dir.mkdir()
    write_json(config_dir / ".claude.json", {"mcpServers": {"git": entry("moved-git")}})
    assert claude_json_path({"CLAUDE_CONFIG_DIR": str(config_dir)}) == config_dir / ".claude.json"
    assert resolve(layout, "git", CLAUDE_CONFIG_DIR=str(config_dir)).command == "moved-git"


def test_variables_expand_in_command_args_and_env_with_defaults(layout: dict[str, Any]) -> None:
    write_json(
        layout["project"] / ".mcp.json",
        {
            "mcpServers": {
                "fs": {
                    "command": "${TOOLS:-/usr/bin}/npx",
                    "args": ["-y", "server", "${ROOT}"],
                    "env": {"TOKEN": "${API_TOKEN}", "MODE": "${MODE:-read}", "EMPTY": "${NOPE:-}"},
                }
            }
        },
    )
    found = resolve(layout, "fs", ROOT="/srv/data", API_TOKEN="s3cret")
    assert found.command == "/usr/bin/npx"
    assert found.args == ("-y", "server", "/srv/data")
    assert found.env_dict == {"TOKEN": "s3cret", "MODE": "read", "EMPTY": ""}


def test_an_unset_variable_without_a_default_is_invalid_and_named() -> None:
    with pytest.raises(RuntimeFailure) as caught:
        expand_vars("--token=${API_TOKEN}", {}, where="server 'x' args[0]")
    assert caught.value.state == "invalid"
    assert "${API_TOKEN}" in caught.value.message and "args[0]" in caught.value.message


def test_an_inline_server_is_expanded_and_named_after_its_program(layout: dict[str, Any]) -> None:
    found = resolve(layout, {"command": "python3", "args": ["-m", "mcp_server_git", "--repository", "${REPO}"]}, REPO="/r")
    assert found.args == ("-m", "mcp_server_git", "--repository", "/r")
    assert found.name == "mcp_server_git"
    assert found.source == "inline"


@pytest.mark.parametrize(
    ("server", "label"),
    [
        ("slack", "slack"),
        ({"command": "/usr/local/bin/mcp-tracker"}, "mcp-tracker"),
        ({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}, "server-filesystem"),
        ({"command": "uvx", "args": ["mcp-server-git"]}, "mcp-server-git"),
        ({"command": "uv", "args": ["run", "tracker.py"]}, "tracker.py"),
        ({"args": []}, "inline"),
        ({"type": "sse", "url": "https://mcp.example/sse"}, "mcp.example"),
        ({"type": "http", "url": "http://127.0.0.1:8123/mcp"}, "127.0.0.1:8123"),
    ],
)
def test_the_server_label_names_the_server_or_the_launched_program(server: Any, label: str) -> None:
    assert server_label(server) == label


@pytest.mark.parametrize("remote", [{"type": "ws", "url": "x"}, {"url": "https://x/"}])
def test_a_remote_server_other_than_http_or_sse_is_unsupported_not_a_crash(layout: dict[str, Any],
                                                                           remote: dict[str, Any]) -> None:
    write_json(layout["home"] / ".claude.json", {"mcpServers": {"remote": remote}})
    failed = refusal(layout, "remote")
    assert failed.state == "unsupported"
    assert "attend runs stdio servers, `type: http` (streamable HTTP) and `type: sse` ones" in failed.message


def test_an_sse_server_resolves_to_its_url_and_expanded_headers(layout: dict[str, Any]) -> None:
    write_json(layout["home"] / ".claude.json", {"mcpServers": {"board": {
        "type": "sse", "url": "https://mcp.example/sse", "headers": {"Authorization": "Bearer ${BOARD_TOKEN}"}}}})
    resolved = resolve(layout, "board", BOARD_TOKEN="t0k")
    assert (resolved.transport, resolved.url, resolved.headers) == (
        "sse", "https://mcp.example/sse", (("Authorization", "Bearer t0k"),))


def test_an_unknown_name_is_invalid_and_says_where_attend_looked(layout: dict[str, Any]) -> None:
    failed = refusal(layout, "nowhere")
    assert failed.state == "invalid"
    assert str(layout["home"] / ".claude.json") in failed.message
    assert str(layout["project"] / ".mcp.json") in failed.message
    assert "missing" in failed.message


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"mcpServers": 3}', '{"mcpServers": {"git": "uvx"}, "projects": []}', ""],
)
def test_a_broken_claude_json_reads_as_no_servers_and_is_never_written(layout: dict[str, Any], content: str) -> None:
    path = layout["home"] / ".claude.json"
    path.write_text(content, encoding="utf-8")
    write_json(layout["project"] / ".mcp.json", {"mcpServers": {"other": entry("x")}})
    failed = refusal(layout, "git")
    assert failed.state == "invalid"
    assert resolve(layout, "other").command == "x"
    assert path.read_text(encoding="utf-8") == content


def test_a_broken_entry_is_invalid_with_its_source(layout: dict[str, Any]) -> None:
    write_json(layout["project"] / ".mcp.json", {"mcpServers": {"a": {"args": ["x"]}, "b": {"command": "x", "args": "y"}}})
    assert "no `command`" in refusal(layout, "a").message
    assert ".mcp.json" in refusal(layout, "b").message


def test_a_project_server_disabled_in_claude_json_is_refused(layout: dict[str, Any]) -> None:
    write_json(layout["project"] / ".mcp.json", {"mcpServers": {"tracker": entry("tracker")}})
    write_json(
        layout["home"] / ".claude.json",
        {"projects": {str(layout["project"]): {"disabledMcpjsonServers": ["tracker"]}}},
    )
    assert refusal(layout, "tracker").state == "refused"


def test_equal_definitions_share_a_session_key_whatever_their_names() -> None:
    a = ServerDefinition(command="x", args=("1",), name="one", source="inline")
    b = ServerDefinition(command="x", args=("1",), name="two", source="user")
    assert a == b and hash(a) == hash(b)
    assert a != ServerDefinition(command="x", args=("2",))


def test_the_fingerprint_changes_with_server_tool_or_args_only() -> None:
    base = fingerprint("git", "git_status", {"repo_path": "/r"})
    assert base == fingerprint("git", "git_status", {"repo_path": "/r"})
    assert base != fingerprint("github", "git_status", {"repo_path": "/r"})
    assert base != fingerprint("git", "git_log", {"repo_path": "/r"})
    assert base != fingerprint("git", "git_status", {"repo_path": "/s"})


def test_an_http_server_resolves_to_its_url_and_headers_with_variables_expanded(layout: dict[str, Any]) -> None:
    remote = {"type": "http", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    write_json(layout["home"] / ".claude.json", {"mcpServers": {"remote": remote}})
    definition = resolve_server("remote", layout["project"], {**layout["env"], "TOKEN": "abc"})
    assert (definition.url, definition.headers) == ("https://mcp.example/mcp", (("Authorization", "Bearer abc"),))


def test_a_launcher_name_with_a_trailing_newline_is_not_a_launcher() -> None:
    # `$` matched before the final newline: "npx\n" was read as npx and its first argument named the server.
    assert server_label({"command": "npx\n", "args": ["server-x"]}) == "npx\n"
