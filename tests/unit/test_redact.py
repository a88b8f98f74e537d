"""The one redaction policy (attend.redact; docs/runtime.md, What a line may contain): what is redacted, what
stays, the cuts that never leave a secret's prefix and the user's patterns. The property over every
rendering and the commands end to end are tests/runtime/test_redaction.py."""

from __future__ import annotations

import json

import pytest

from attend import redact
from attend.redact import MARK, pattern_problem, redact_data, shorten
from attend.text import json_text, one_line, printable


@pytest.fixture(autouse=True)
def _no_user_patterns():
    redact.use(())
    yield
    redact.use(())


@pytest.mark.parametrize("text, shown", [
    ('bash -c "env ANTHROPIC_API_KEY=sk-ant-api03-abc claude"', 'bash -c "env ANTHROPIC_API_KEY=<redacted> claude"'),
    ("env FOO_TOKEN=abc123 cmd", "env FOO_TOKEN=<redacted> cmd"),
    ('DB_PASSWORD="two words" next', "DB_PASSWORD=<redacted> next"),
    ("MY_SESSION_COOKIE=x1; AWS_SECRET_ACCESS_KEY=wJalr", "MY_SESSION_COOKIE=<redacted> AWS_SECRET_ACCESS_KEY=<redacted>"),
    # a value runs to white space or a quote: a password may hold `&` or `;`, so the rest of a query goes too
    ("curl 'https://api/x?access_token=abc&page=2'", "curl 'https://api/x?access_token=<redacted>'"),
    ("password=hunter2", "password=<redacted>"),
    ("tool --token ghp_x --verbose", "tool --token <redacted> --verbose"),
    ("tool --token=abc123", "tool --token=<redacted>"),
    ("cli --api-key k1 --client-secret s2 --db-password p3", "cli --api-key <redacted> --client-secret <redacted> --db-password <redacted>"),
    ("x --password --verbose", "x --password --verbose"),  # a flag's value is never another flag
    ("mysql -uroot -pSECRET db", "mysql -uroot -p<redacted> db"),
    ("mysqldump -h db -pS3cr3t shop", "mysqldump -h db -p<redacted> shop"),
    ("sshpass -p hunter2 ssh host", "sshpass -p <redacted> ssh host"),
    ("git clone https://me:pa55@github.com/x/y", "git clone https://<redacted>@github.com/x/y"),
    ('curl -H "Authorization: Bearer abc.def" https://x', 'curl -H "Authorization: Bearer <redacted>" https://x'),
    ("Proxy-Authorization: Basic dXNlcjpwYXNz", "Proxy-Authorization: Basic <redacted>"),
    ("sent Bearer a1b2c3d4e5f6 upstream", "sent Bearer <redacted> upstream"),
    ("authorization=xyz", "authorization=<redacted>"),
    ("Cookie: sid=abc; theme=dark", "Cookie: <redacted>"),
    ("token sk-proj-" + "a1B2" * 8, "token <redacted>"),
    ("remote ghp_" + "A1b2" * 9 + " and gho_" + "Z9" * 18, "remote <redacted> and <redacted>"),
    ("github_pat_11ABCDEFG0123456789_" + "x" * 59, "<redacted>"),
    ("glpat-" + "Ab3_" * 5, "<redacted>"),
    ("xoxb-1234567890-0987654321-abcDEF", "<redacted>"),
    ("key AKIAIOSFODNN7EXAMPLE in use", "key <redacted> in use"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-Abc_1", "jwt <redacted>"),
])
def test_a_credential_of_each_kind_the_policy_knows_reads_redacted(text: str, shown: str) -> None:
    assert redact.redact(text) == shown
    assert printable(text) == shown  # the one path every text goes through


@pytest.mark.parametrize("text", [
    "ssh -p2222 host", "mkdir -p a/b", "docker run -p8080:80 img", "tar -pxf a.tar",
    "https://git@github.com/x/y.git", "[attend sensor=slack priority=medium] new (server=slack, key=C1/42)",
    "max_tokens=4096 --author bob --passes 3", "ask-me-anything-about-something-long", "a task list",
    "Authorization: Bearer <hidden: 14 characters>", "session 4f2 started; key=value",
    "the bearer token is missing or wrong", 'WWW-Authenticate: Bearer error="invalid_token"',
])
def test_what_is_not_a_credential_stays_as_it_is(text: str) -> None:
    assert redact.redact(text) == text


def test_structured_data_hides_a_credential_named_key_and_the_value_after_a_credential_flag() -> None:
    data = {"command": {"argv": ["gh", "--token", "abc", "-v"], "env": {"API_TOKEN": "t0k", "HOME": "/h"}},
            "tokens": 104000, "key": "C1", "note": "Bearer xyz"}
    assert redact_data(data) == {"command": {"argv": ["gh", "--token", MARK, "-v"],
                                             "env": {"API_TOKEN": MARK, "HOME": "/h"}},
                                 "tokens": 104000, "key": "C1", "note": "Bearer xyz"}
    assert json.loads(json_text(data))["command"]["env"]["API_TOKEN"] == MARK
    argv = ["curl", "-H", "Authorization:", "Bearer", "abc", "https://x"]  # a header: any value
    assert redact_data(argv) == ["curl", "-H", "Authorization:", "Bearer", MARK, "https://x"]
    assert redact_data(["mysql", "-uroot", "-pS3cret", "shop"]) == ["mysql", "-uroot", f"-p{MARK}", "shop"]
    assert redact_data(["ssh", "-p", "22", "host"]) == ["ssh", "-p", "22", "host"]


def test_a_cut_drops_a_mark_it_would_split_and_never_leaves_a_prefix() -> None:
    line = "run ANTHROPIC_API_KEY=sk-ant-api03-" + "Q" * 40 + " claude"
    for limit in range(1, len(line) + 2):
        out = shorten(line, limit)
        assert len(out) <= limit and "sk" not in out.split("=", 1)[-1] and "<redac" not in out.replace(MARK, "")
    assert shorten(line, 25) == "run ANTHROPIC_API_KEY=…"
    assert one_line(line, 30) == "run ANTHROPIC_API_KEY=<redac…".replace("<redac", "")[:-1] + "…"


def test_the_users_patterns_apply_to_every_text_and_bad_ones_are_refused() -> None:
    assert redact.redact("ticket internal-123456 open") == "ticket internal-123456 open"
    redact.use(["internal-[0-9]{6}", "(?<=customer=)[^ ]+"])
    assert printable("ticket internal-123456 for customer=acme") == f"ticket {MARK} for customer={MARK}"
    redact.use(())
    assert redact.redact("internal-123456") == "internal-123456"
    assert pattern_problem("(") is not None and pattern_problem("") is not None and pattern_problem("a*") is not None
    assert pattern_problem(3) is not None and pattern_problem("x" * 2000) is not None
    assert pattern_problem("internal-[0-9]{6}") is None


#: Backtracks catastrophically (Fibonacci in the length of a run of `a` not followed by the end), in Python's
#: `re` and in the `regex` module alike: on `STALLING` it runs for minutes unless stopped.
CATASTROPHIC = "(a|aa)+$"
STALLING = "a" * 40 + "!"


def test_a_user_pattern_that_backtracks_catastrophically_is_stopped_by_the_timeout_reported_and_taken_out() -> None:
    told: list[str] = []
    redact.on_stall(told.append)
    try:
        redact.use([CATASTROPHIC, "internal-[0-9]{6}"])
        assert printable("ticket internal-123456 ok") == f"ticket {MARK} ok"
        # The search stops at the timeout (else this test runs for minutes): what the pattern would have
        # hidden in this text cannot be known, so the whole text is hidden, and the pattern is named.
        assert printable(f"build {STALLING} ticket internal-123456") == MARK
        assert len(told) == 1 and repr(CATASTROPHIC) in told[0] and "no longer applied" in told[0]
        assert redact.stalled() == (CATASTROPHIC,) and redact.user_patterns() == ("internal-[0-9]{6}",)
        # Out of force: the same text again costs no timeout and is redacted by the other patterns.
        assert printable(f"build {STALLING} ticket internal-123456") == f"build {STALLING} ticket {MARK}"
        assert len(told) == 1
        redact.use([CATASTROPHIC, "internal-[0-9]{6}"])  # the same list (a hot reload): it stays out
        assert redact.stalled() == (CATASTROPHIC,)
        redact.use(["internal-[0-9]{6}"])  # a changed list is in force whole
        assert redact.stalled() == () and redact.user_patterns() == ("internal-[0-9]{6}",)
    finally:
        redact.on_stall(None)


def test_nothing_is_compiled_for_a_text_that_holds_no_cue() -> None:
    fresh = [redact._rule(needles, rule.pattern, lower=lower) for needles, lower, rule in
             ((n, low, p.compiled()) for n, low, p in redact._RULES)]
    saved = redact._RULES
    try:
        redact._RULES = tuple(fresh)
        redact.redact("origin/main moved to 9e8d7c6 (4 moves held)")
        assert all(rule._compiled is None for _, _, rule in redact._RULES)
        redact.redact("key AKIAIOSFODNN7EXAMPLE")
        assert sum(rule._compiled is not None for _, _, rule in redact._RULES) == 1
    finally:
        redact._RULES = saved
