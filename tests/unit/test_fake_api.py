"""The fake Messages API the real-host tests run Claude Code against (tests/fake_api.py): what it answers."""

from __future__ import annotations

import json
import textwrap
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

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


def test_a_reply_whose_before_raises_is_a_recorded_failure_answered_500_and_the_fake_goes_on_serving():
    def broken() -> None:
        raise RuntimeError("the test's own step failed")

    with FakeAPI() as api:
        api.reply(replace(text("never sent"), before=broken), text("after"))
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(api, "a")
        refused.value.close()
        assert refused.value.code == 500
        assert api.failures == ["request #0: before the reply: RuntimeError: the test's own step failed"]
        # The handler lived on: Claude Code's retry is answered, and every timeout message names the failure.
        assert post(api, "a")["content"] == [{"type": "text", "text": "after"}]
        assert "FAILED request #0: before the reply: RuntimeError" in api.summary()
        with pytest.raises(AssertionError, match="FAILED request #0: before the reply"):
            api.wait_count(3, timeout=0.01)


def test_the_fake_api_fixture_fails_a_test_whose_before_raised(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1]))  # where host_rig.py and fake_api.py are
    pytester.makeconftest("pytest_plugins = ['host_rig']")
    pytester.makepyfile(test_broken=textwrap.dedent("""
        import json, urllib.request
        import urllib.error
        from dataclasses import replace
        from fake_api import text

        def test_x(fake_api):
            def broken():
                raise ValueError("boom")
            fake_api.reply(replace(text("x"), before=broken))
            body = json.dumps({"model": "m", "messages": [], "tools": [{"name": "Bash"}]}).encode()
            try:
                urllib.request.urlopen(urllib.request.Request(fake_api.url + "/v1/messages", data=body), timeout=10)
            except urllib.error.HTTPError as refused:
                refused.close()
    """))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the fake Messages API failed to answer:*",
                                 "*request #0: before the reply: ValueError: boom*"])
