"""Remote MCP servers (issue 26, part 3): `type: http` over streamable HTTP and `type: sse`, named or inline,
headers with ${VAR}, auth_failed."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from daemon_rig import sensors_json
from mcp_rig import GENEROUS, SERVERS, Behind, call_tool, free_port, mcp_sensor_yaml, polled_ok, serving

from attend.errors import RuntimeFailure
from attend.runtime.kinds import PollContext
from attend.runtime.mcp.servers import McpSettings
from attend.spec.reader import read_mcp
from waiting import wait_until

if TYPE_CHECKING:
    from attend.runtime.mcp.pool import McpPool

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def remote_behind(tmp_path_factory: pytest.TempPathFactory) -> Behind:
    """What stands behind this module's remote server (started once per module: it keeps no state a test
    could see, each client gets its own session)."""
    folder = tmp_path_factory.mktemp("remote")
    return Behind(folder / "items.json", folder / "starts.txt", folder / "crash-now")


def refusal_file(behind: Behind) -> Path:
    """The file whose JSON `{body, challenge}` the module's server answers a refused request with (remote.py)."""
    return behind.items_file.with_name("refusal.json")


@pytest.fixture
def behind(remote_behind: Behind) -> Behind:
    """The module's `remote_behind`, its items back to the one item every test starts from, its refusal the usual."""
    remote_behind.write_items([{"id": "a", "title": "first"}])
    refusal_file(remote_behind).unlink(missing_ok=True)
    return remote_behind


@pytest.fixture(scope="module")
def remote_server(remote_behind: Behind) -> Iterator[int]:
    """The port of servers/remote.py on 127.0.0.1: streamable HTTP at /mcp, SSE at /sse, one process."""
    port = free_port()
    env = {**remote_behind.env(ATTEND_TEST_REFUSAL=str(refusal_file(remote_behind))), "PATH": "/usr/bin:/bin"}
    with serving([sys.executable, str(SERVERS / "remote.py"), str(port), TOKEN], port, env) as served:
        yield served


@pytest.fixture
def remote(remote_server: int, behind: Behind) -> int:
    """The remote test server over streamable HTTP on a free 127.0.0.1 port, accepting only `Bearer TOKEN`."""
    return remote_server


@pytest.fixture
def remote_sse(remote_server: int, behind: Behind) -> int:
    """The same server speaking HTTP with server-sent events (/sse), accepting only `Bearer TOKEN`."""
    return remote_server


def configure(ctx: PollContext, port: int) -> None:
    """A project `.mcp.json` naming the remote server, its token read from ${REMOTE_TOKEN}."""
    servers = {"remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp",
                          "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}}
    (ctx.project_dir / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def settings() -> McpSettings:
    return McpSettings(read_mcp({"server": "remote", "tool": "list_items", "timeout": GENEROUS}))


async def test_a_remote_server_over_streamable_http_is_called_with_the_expanded_header(
    ctx: PollContext, pool: McpPool, remote: int
) -> None:
    configure(ctx, remote)
    ctx.env["REMOTE_TOKEN"] = TOKEN
    definition, call = await call_tool(settings(), ctx)
    assert call.document == {"items": [{"id": "a", "title": "first"}]}
    assert definition.url == f"http://127.0.0.1:{remote}/mcp"


async def test_a_wrong_token_is_auth_failed_with_the_servers_words_and_backs_off(
    ctx: PollContext, pool: McpPool, remote: int
) -> None:
    configure(ctx, remote)
    ctx.env["REMOTE_TOKEN"] = "wrong"
    with pytest.raises(RuntimeFailure) as refused:
        await call_tool(settings(), ctx)
    assert refused.value.state == "auth_failed"
    assert "HTTP 401" in refused.value.message and "the bearer token is missing or wrong" in refused.value.message
    # the next attempt waits out the restart backoff (cadence.backoff) instead of hammering the server
    with pytest.raises(RuntimeFailure) as waiting:
        await call_tool(settings(), ctx)
    assert waiting.value.state == "unavailable" and "refused the credential" in waiting.value.message


#: A refusal that drives a terminal (issue 35, item 3): the body's OSC title sequence, screen clears and colours
#: (ESC bytes), the challenge's 8-bit CSI and OSC (C1 controls, which a header may carry), each some 8 KB.
HOSTILE_BODY = "\x1b]0;owned\x07" + "\x1b[2J\x1b[31mred [/][bold] " * 500
HOSTILE_CHALLENGE = 'Bearer error="invalid_token", error_description="' + "\u009b2J\u009d0;owned\u009c\u202e " * 1000 + '"'
#: What a terminal acts on: C0 but tab and newline, DEL, C1, the bidirectional controls (text.printable's set).
DRIVES_A_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def answer_hostile_refusals(behind: Behind) -> None:
    """Make the module's server answer a refused request with HOSTILE_BODY and HOSTILE_CHALLENGE (written whole:
    the server reads the file on each refusal)."""
    from attend.files import write_atomically

    write_atomically(refusal_file(behind), json.dumps({"body": HOSTILE_BODY, "challenge": HOSTILE_CHALLENGE}))


def assert_quoted(message: str) -> None:
    """`message` quotes a hostile refusal as every surface must: escaped, on one line, each part cut to 300 characters."""
    assert not DRIVES_A_TERMINAL.search(message), message[:400]
    assert "\n" not in message
    assert "HTTP 401 Unauthorized: \\x1b]0;owned\\x07" in message  # the server's words, escaped, not dropped
    assert len(message) < 900, len(message)  # each of body and challenge at most 300 characters (docs/mcp.md)


async def test_a_hostile_refusal_is_quoted_escaped_on_one_line_and_cut(
    ctx: PollContext, pool: McpPool, remote: int, behind: Behind
) -> None:
    answer_hostile_refusals(behind)
    configure(ctx, remote)
    ctx.env["REMOTE_TOKEN"] = "wrong"
    with pytest.raises(RuntimeFailure) as refused:
        await call_tool(settings(), ctx)
    assert refused.value.state == "auth_failed"
    assert_quoted(refused.value.message)
    assert 'Bearer error="invalid_token", error_description="\\x9b2J\\x9d0;owned\\x9c\\u202e' in refused.value.message
    assert refused.value.message.endswith("…)")  # the challenge, cut


async def test_a_missing_token_variable_is_auth_failed_before_any_request(ctx: PollContext, pool: McpPool) -> None:
    configure(ctx, 9)  # nothing listens there: no request is made
    with pytest.raises(RuntimeFailure) as missing:
        await call_tool(settings(), ctx)
    assert missing.value.state == "auth_failed"
    assert "${REMOTE_TOKEN} is not set" in missing.value.message


async def test_a_remote_server_nothing_listens_at_is_exec_failed_saying_it_was_not_reached(
    ctx: PollContext, pool: McpPool
) -> None:
    # it said "stopped: ... (stderr: <log>)", as for a stdio server that died: nothing was started here
    port = free_port()
    configure(ctx, port)
    ctx.env["REMOTE_TOKEN"] = TOKEN
    with pytest.raises(RuntimeFailure) as unreached:
        await call_tool(settings(), ctx)
    assert unreached.value.state == "exec_failed"
    message = unreached.value.message
    assert message.startswith(f"MCP server 'remote' could not be reached at http://127.0.0.1:{port}/mcp: "), message
    assert "(log: " in message and "stderr" not in message and "stopped" not in message


def test_a_remote_server_of_another_transport_stays_unsupported(ctx: PollContext) -> None:
    from attend.runtime.mcp.servers import resolve_server

    for server in ({"type": "ws", "url": "ws://127.0.0.1:9/mcp"}, {"url": "http://127.0.0.1:9/mcp"}):
        with pytest.raises(RuntimeFailure) as other:
            resolve_server(server, ctx.project_dir, ctx.env)
        assert other.value.state == "unsupported"


def sse_settings(port: int, token: str) -> McpSettings:
    """A sensor naming the SSE server inline, its token from ${REMOTE_TOKEN} (set to `token`)."""
    server = {"type": "sse", "url": f"http://127.0.0.1:{port}/sse", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}
    return McpSettings(read_mcp({"server": server, "tool": "list_items", "timeout": GENEROUS}))


async def test_an_inline_sse_server_is_called_with_the_expanded_header(
    ctx: PollContext, pool: McpPool, remote_sse: int
) -> None:
    ctx.env["REMOTE_TOKEN"] = TOKEN
    definition, call = await call_tool(sse_settings(remote_sse, TOKEN), ctx)
    assert call.document == {"items": [{"id": "a", "title": "first"}]}
    assert (definition.transport, definition.name) == ("sse", f"127.0.0.1:{remote_sse}")


async def test_a_wrong_token_on_an_sse_server_is_auth_failed_with_its_words_and_backs_off(
    ctx: PollContext, pool: McpPool, remote_sse: int
) -> None:
    ctx.env["REMOTE_TOKEN"] = "wrong"
    with pytest.raises(RuntimeFailure) as refused:
        await call_tool(sse_settings(remote_sse, "wrong"), ctx)
    assert refused.value.state == "auth_failed"
    assert "HTTP 401" in refused.value.message and "the bearer token is missing or wrong" in refused.value.message
    assert 'Bearer error="invalid_token"' in refused.value.message
    with pytest.raises(RuntimeFailure) as waiting:
        await call_tool(sse_settings(remote_sse, "wrong"), ctx)
    assert waiting.value.state == "unavailable" and "refused the credential" in waiting.value.message


@pytest.mark.slow
def test_attend_run_polls_remote_servers_over_http_and_sse_and_a_stale_token_is_auth_failed_in_the_servers_words(
    quiet_home: Any, daemon: Any, behind: Behind, remote: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One daemon for the two transports (a test and a daemon each before; a daemon imports the SDK, ~2 s of CPU):
    # `tracker` names an http server in .mcp.json whose header holds the token; `board` names an sse server
    # inline, its token read from ${REMOTE_TOKEN}. The same server answers both (servers/remote.py).
    def configure_token(token: str) -> None:
        servers = {"tracker": {"type": "http", "url": f"http://127.0.0.1:{remote}/mcp",
                               "headers": {"Authorization": f"Bearer {token}"}}}
        (quiet_home.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    configure_token(TOKEN)
    monkeypatch.setenv("REMOTE_TOKEN", TOKEN)
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", "tracker"))
    server = {"type": "sse", "url": f"http://127.0.0.1:{remote}/sse", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}
    quiet_home.write_user_sensor("board", mcp_sensor_yaml("board", server))
    for name in ("tracker", "board"):
        probed = quiet_home.attend("sensors", "probe", name, "--confirm")
        assert probed.returncode == 0, probed.stderr

    def notes(out: list[str], name: str) -> list[str]:
        return [line for line in out if line.startswith(f"[attend sensor={name} ")]

    running = daemon()
    wait_until(lambda: polled_ok(quiet_home, "tracker") and polled_ok(quiet_home, "board"),
               what="the baseline polls of the http and the sse server")
    behind.write_items([{"id": "a", "title": "first"}, {"id": "b", "title": "second"}])
    running.wait_for(lambda out: all(any("new item b" in note for note in notes(out, name)) for name in ("tracker", "board")))
    (note,) = notes(running.stdout, "tracker")
    assert "server=tracker" in note
    (note,) = notes(running.stdout, "board")
    assert f"server=127.0.0.1:{remote}" in note  # an inline remote server is named after its host and port

    configure_token("expired")  # the same server, now with a credential it refuses
    wait_until(lambda: sensors_json(quiet_home)["tracker"].get("state") == "auth_failed", what="auth_failed")
    running.stop()
    message = sensors_json(quiet_home)["tracker"]["message"]
    assert "HTTP 401" in message and "the bearer token is missing or wrong" in message

    monkeypatch.setenv("REMOTE_TOKEN", "expired")  # the token in the environment went stale (the probe still holds)
    running = daemon()
    wait_until(lambda: sensors_json(quiet_home)["board"].get("state") == "auth_failed", what="auth_failed")
    running.stop()
    doctor = quiet_home.attend("doctor", "--json")
    assert doctor.returncode == 1
    (auth,) = [check for check in json.loads(doctor.stdout)["checks"] if check["check"] == "mcp auth"]
    assert auth["status"] == "fail" and auth["message"].startswith("auth_failed: board (the daemon's last poll): ")
    assert "HTTP 401" in auth["message"] and "the bearer token is missing or wrong" in auth["message"]
    assert "never starts a login" in auth["fix"]


@pytest.mark.slow
def test_a_hostile_refusal_reaches_every_surface_escaped_on_one_line_and_cut(
    quiet_home: Any, daemon: Any, behind: Behind, remote: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 35, item 3: `sensors probe` printed the body and the challenge raw (ESC bytes, an OSC title) and
    # whole (8 KB) while `attend sensors` escaped them; one text for the server's words, everywhere
    servers = {"tracker": {"type": "http", "url": f"http://127.0.0.1:{remote}/mcp",
                           "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}}
    (quiet_home.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    quiet_home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", "tracker"))
    monkeypatch.setenv("REMOTE_TOKEN", TOKEN)
    assert quiet_home.attend("sensors", "probe", "tracker", "--confirm").returncode == 0

    answer_hostile_refusals(behind)
    monkeypatch.setenv("REMOTE_TOKEN", "expired")
    probed = quiet_home.attend("sensors", "probe", "tracker")
    assert probed.returncode == 1
    assert_quoted(probed.stderr.strip())

    running = daemon()
    wait_until(lambda: sensors_json(quiet_home)["tracker"].get("state") == "auth_failed", what="auth_failed")
    running.stop()

    def said(out: str) -> str:
        """The first line of `out` that quotes the refusal (on one line: `assert_quoted` finds its start)."""
        assert not DRIVES_A_TERMINAL.search(out), out[:400]
        return next(line for line in out.splitlines() if "refused the credential" in line)

    listed = quiet_home.attend("sensors")
    assert_quoted(said(listed.stdout))
    assert_quoted(sensors_json(quiet_home)["tracker"]["message"])
    history = quiet_home.attend("sensors", "history", "tracker")
    assert_quoted(said(history.stdout))
    history_json = quiet_home.attend("sensors", "history", "tracker", "--json")
    assert not DRIVES_A_TERMINAL.search(history_json.stdout)
    assert_quoted(json.loads(history_json.stdout)["history"][0]["message"])
    doctor = quiet_home.attend("doctor")
    assert_quoted(said(doctor.stdout))
    doctor_json = quiet_home.attend("doctor", "--json")
    (auth,) = [check for check in json.loads(doctor_json.stdout)["checks"] if check["check"] == "mcp auth"]
    assert_quoted(auth["message"])


def test_the_tabs_probe_shows_a_hostile_refusal_escaped_and_as_plain_text(
    home: Any, behind: Behind, remote: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the tab's probe (`P`) is a surface too: the server's words are no markup for it (`[/]` would end a style
    # that was never opened) and drive no terminal
    import asyncio

    from textual.widgets import DataTable

    from attend.tui import SensorsApp

    servers = {"tracker": {"type": "http", "url": f"http://127.0.0.1:{remote}/mcp",
                           "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}}}
    (home.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    home.write_user_sensor("tracker", mcp_sensor_yaml("tracker", "tracker"))
    monkeypatch.setenv("REMOTE_TOKEN", "wrong")
    answer_hostile_refusals(behind)
    shown: list[tuple[str, bool]] = []

    async def run() -> None:
        app = SensorsApp(home.project, refresh_seconds=None)
        async with app.run_test(size=(120, 40)) as pilot:
            table = app.screen.query_one("#sensors", DataTable)
            table.move_cursor(row=table.get_row_index("tracker"))
            await pilot.press("P")
            await app.workers.wait_for_complete()
            await pilot.pause()
            shown.extend((n.message, n.markup) for n in app._notifications if n.title == "probe failed")

    asyncio.run(run())
    ((message, markup),) = shown
    assert markup is False
    assert message.startswith("auth_failed: MCP server 'tracker' refused the credential: ")
    assert_quoted(message)
