"""The fake Messages API the real-host tests run Claude Code against (tests/fake_api.py): what it answers."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from fake_api import DEFAULT_TEXT, FakeAPI, text


def post(api: FakeAPI, session: str, *, turn: bool = True) -> dict[str, Any]:
    """One non-streamed request of `session` (a model turn when it offers tools), and the fake's answer."""
    body = {"model": "claude-fake", "messages": [{"role": "user", "content": "hi"}],
            **({"tools": [{"name": "Bash"}]} if turn else {})}
    request = urllib.request.Request(f"{api.url}/v1/messages", data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json",
                                              "x-claude-code-session-id": session})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_an_unscripted_turn_reports_the_context_its_session_last_reported_not_a_shrunk_one():
    with FakeAPI() as api:
        api.reply(text("second answer", usage={"input_tokens": 76_000}), session="a")
        assert post(api, "a")["usage"]["input_tokens"] == 76_000
        # A turn Claude Code starts by itself (a Monitor event): the context is what it was, not 10 tokens,
        # which the context and disclosure sensors would read as a compaction.
        woken = post(api, "a")
        assert woken["content"] == [{"type": "text", "text": DEFAULT_TEXT}]
        assert woken["usage"]["input_tokens"] == 76_000
        assert post(api, "b")["usage"]["input_tokens"] == 10  # another session: nothing scripted for it yet
        assert post(api, "a", turn=False)["usage"]["input_tokens"] == 10  # a side request (a title) is no turn
