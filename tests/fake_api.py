"""A local stand-in for the Anthropic Messages API, for running the real Claude Code CLI offline.

    api = FakeAPI()                        # listening on 127.0.0.1:<free port>, a thread of this process
    env["ANTHROPIC_BASE_URL"] = api.url    # with any ANTHROPIC_API_KEY
    api.reply(text("sure"))                # the next turn's answer (else DEFAULT_TEXT)
    api.reply(bash("attend peers send ..."), text("sent"))  # a Bash tool call, then the answer after it
    api.reply(text("ok", usage={"input_tokens": 150_000}))  # usage figures (drive the context sensor)
    request = api.wait_for("[attend sensor=")  # the first request whose text holds this (PATIENCE)
    request.text                           # all the model was told: system, messages, tool results, reminders
    api.requests                           # every request so far, in arrival order
    api.failures                           # what went wrong while answering (a reply's `before` that raised)
    api.close()

`POST /v1/messages` answers in server-sent events when the body says `stream` (message_start,
content_block_start/delta/stop per block, message_delta with the stop reason and usage, message_stop),
else one JSON message; `POST /v1/messages/count_tokens` answers a count; anything else is a 404.
Each `/v1/messages` request is logged (`Request`: body, headers, the session id Claude Code sends as
`X-Claude-Code-Session-Id`) before it is answered; `wait_for`/`wait_count` wait on a condition variable, never
on a fixed time. A reply's `before` that raises is recorded in `failures` ("request #N: before the reply:
...") and the request answered 500, so the handler goes on serving and the failure is named in every timeout
message (`summary`); the `fake_api` fixture fails a test that left any.

Scripted replies go, in order, to the model turns of the agent (requests that offer tools); `reply(...,
session=ID)` keeps a reply for one session. A turn with no reply waiting gets `text(DEFAULT_TEXT)`, reporting
the usage figures of its session's last scripted turn: a context does not shrink by itself (only a compaction
shrinks it), so a turn Claude Code starts on its own (a Monitor event reaching an idle session) must not
tell the context and disclosure sensors that it did.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from waiting import PATIENCE

#: What a model turn answers when no reply is scripted for it.
DEFAULT_TEXT = "Noted."


@dataclass(frozen=True)
class Reply:
    """One assistant message: its content blocks, its stop reason and the usage figures reported with it."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=dict)
    #: Run before the reply is sent (the model "thinking"): what happens meanwhile happens during the turn.
    before: Callable[[], object] | None = field(default=None, compare=False)


def text(words: str, *, usage: dict[str, int] | None = None) -> Reply:
    """A reply saying `words` and ending the turn; `usage` (input_tokens, cache_read_input_tokens, ...) is
    what Claude Code reads as the context this request used."""
    return Reply(({"type": "text", "text": words},), "end_turn", dict(usage or {}))


_tool_ids = itertools.count(1)


def tool_use(name: str, tool_input: dict[str, Any], *, usage: dict[str, int] | None = None) -> Reply:
    """A reply calling tool `name` with `tool_input`: Claude Code runs it and sends its result in the next request."""
    block = {"type": "tool_use", "id": f"toolu_fake{next(_tool_ids):06d}", "name": name, "input": tool_input}
    return Reply((block,), "tool_use", dict(usage or {}))


def bash(command: str, *, usage: dict[str, int] | None = None) -> Reply:
    """A reply running `command` with the Bash tool."""
    return tool_use("Bash", {"command": command, "description": "run a command"}, usage=usage)


def texts_of(value: Any) -> Iterator[str]:
    """Every string under a `text` or `content` key of a request body part, in order (text blocks,
    tool results, system reminders, the system prompt)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)
    elif isinstance(value, dict):
        for key in ("text", "content"):
            if key in value:
                yield from texts_of(value[key])


@dataclass(frozen=True)
class Request:
    """One `POST /v1/messages` as the fake received it."""

    number: int  # 0-based arrival order
    received: float  # time.time() when it arrived
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def session(self) -> str:
        """Claude Code's session id for this request ('' when the header is missing)."""
        return self.headers.get("x-claude-code-session-id", "")

    @property
    def is_turn(self) -> bool:
        """A model turn of the agent (it offers tools), not a side request such as a title."""
        return bool(self.body.get("tools"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def system_text(self) -> str:
        return "\n".join(texts_of(self.body.get("system") or []))

    @property
    def messages_text(self) -> str:
        return "\n".join(texts_of(self.messages))

    @property
    def text(self) -> str:
        """All text the model was given: the system prompt and every message (tool results and
        `<system-reminder>` blocks included)."""
        return self.system_text + "\n" + self.messages_text

    def count(self, needle: str) -> int:
        """How many times `needle` occurs in the messages (the conversation so far, as the model reads it)."""
        return self.messages_text.count(needle)


class FakeAPI:
    """The Messages API on 127.0.0.1 (a free port), answering from a script; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.others: list[tuple[str, str]] = []  # (method, path) of everything that is not /v1/messages
        self.failures: list[str] = []  # "request #N: before the reply: ...", in the order they happened
        self._replies: list[tuple[str | None, Reply]] = []
        self._context: dict[str, dict[str, int]] = {}  # session -> the usage its last scripted turn reported
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-api", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=PATIENCE)

    def __enter__(self) -> FakeAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the script -------------------------------------------------------------------------------------

    def reply(self, *replies: Reply, session: str | None = None) -> None:
        """Answer the next model turns (of `session`, or of any session) with `replies`, in order."""
        with self._changed:
            self._replies.extend((session, r) for r in replies)

    def pending(self) -> int:
        """Scripted replies not handed out yet."""
        with self._changed:
            return len(self._replies)

    def _answer_for(self, request: Request) -> Reply:
        with self._changed:
            if not request.is_turn:
                return text(DEFAULT_TEXT)
            for i, (session, reply) in enumerate(self._replies):
                if session is None or session == request.session:
                    del self._replies[i]
                    if reply.usage:
                        self._context[request.session] = reply.usage
                    return reply
            return text(DEFAULT_TEXT, usage=self._context.get(request.session))

    # -- the log ----------------------------------------------------------------------------------------

    def _failed(self, request: Request, exc: BaseException) -> None:
        with self._changed:
            self.failures.append(f"request #{request.number}: before the reply: "
                                 + "".join(traceback.format_exception_only(exc)).strip())

    def _log(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Request:
        with self._changed:
            request = Request(len(self.requests), time.time(), path, headers, body)
            self.requests.append(request)
            self._changed.notify_all()
            return request

    def wait(self, predicate: Callable[[list[Request]], object], timeout: float = PATIENCE,
             what: str = "a request") -> None:
        """Return once `predicate(requests)` holds; fail after `timeout` seconds naming `what`."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self.requests), timeout=timeout):
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; "
                                     f"{len(self.requests)} request(s) came: {self.summary()}")

    def wait_for(self, needle: str, *, session: str | None = None, after: int = 0,
                 timeout: float = PATIENCE) -> Request:
        """The first request (numbered `after` or later, of `session` when given) whose messages hold `needle`."""
        found: list[Request] = []

        def seen(requests: list[Request]) -> bool:
            found[:] = [r for r in requests[after:] if (session is None or r.session == session)
                        and needle in r.messages_text][:1]
            return bool(found)

        self.wait(seen, timeout, f"a request holding {needle!r}")
        return found[0]

    def wait_count(self, count: int, *, session: str | None = None, timeout: float = PATIENCE) -> list[Request]:
        """Return the requests (of `session`) once there are at least `count` of them."""
        self.wait(lambda rs: len(self.of(session, rs)) >= count, timeout, f"{count} request(s)")
        return self.of(session)

    def of(self, session: str | None, requests: list[Request] | None = None) -> list[Request]:
        """The requests of `session` (all of them for None)."""
        with self._changed:
            listed = list(self.requests if requests is None else requests)
        return [r for r in listed if session is None or r.session == session]

    def holding(self, needle: str, session: str | None = None) -> list[Request]:
        """The requests whose messages hold `needle`."""
        return [r for r in self.of(session) if needle in r.messages_text]

    def summary(self) -> str:
        """One line per failure (`failures`), then one per request: number, session, and the end of its last
        message (for failure messages)."""
        with self._changed:
            listed = list(self.requests)
            failures = list(self.failures)
        lines = [f"FAILED {failure}" for failure in failures]
        for r in listed:
            last = "\n".join(texts_of(r.messages[-1:])) if r.messages else ""
            lines.append(f"#{r.number} {r.session[:8]} {last[-300:]!r}")
        return "\n" + "\n".join(lines)


def _events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of one streamed reply."""
    usage = {"input_tokens": 10, "output_tokens": 1, **reply.usage}
    start = {"id": f"msg_fake{next(_tool_ids):06d}", "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(reply.content):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": max(1, usage.get("output_tokens", 1))}}
    yield "message_stop", {"type": "message_stop"}


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            pass

        def _send_json(self, status: int, value: object) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _other(self) -> None:
            api.others.append((self.command, self.path))
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

        do_GET = do_HEAD = do_PUT = do_DELETE = _other  # noqa: N815 (http.server's names)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = self.path.split("?", 1)[0]
            if path == "/v1/messages/count_tokens":
                api.others.append((self.command, self.path))
                self._send_json(200, {"input_tokens": 10})
                return
            if path != "/v1/messages":
                self._other()
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "json"}})
                return
            request = api._log(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            reply = api._answer_for(request)
            if reply.before is not None:
                try:
                    reply.before()
                except Exception as exc:  # the test's own code failed: say so, and keep serving
                    api._failed(request, exc)
                    self._send_json(500, {"type": "error", "error": {"type": "api_error",
                                                                     "message": "the fake's before() raised"}})
                    return
            model = str(body.get("model", "claude-fake"))
            if not body.get("stream"):
                usage = {"input_tokens": 10, "output_tokens": 1, **reply.usage}
                self._send_json(200, {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                      "content": list(reply.content), "stop_reason": reply.stop_reason,
                                      "stop_sequence": None, "usage": usage})
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event, data in _events(reply, model):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler
