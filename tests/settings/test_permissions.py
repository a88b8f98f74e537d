"""`attend permissions` and doctor's permissions check: each enabled sensor's `requires:` against the
permission rules of Claude Code's real settings files (~/.claude/settings.json, the project's
.claude/settings.json and .claude/settings.local.json), through the CLI (attend.cli.main)."""

from __future__ import annotations

import json

import pytest
from tests.conftest import run_in_process

from attend.settings.permissions import covers, parse_rule


def attend(home, *args: str):
    return run_in_process(list(args), env=home.env(), cwd=home.project)


def allow(path, *rules: str, deny: tuple[str, ...] = (), ask: tuple[str, ...] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"allow": list(rules), "deny": list(deny), "ask": list(ask)},
                                "model": "sonnet"}))


def user_settings(home):
    return home.root / ".claude" / "settings.json"


def local_settings(home):
    return home.project / ".claude" / "settings.local.json"


@pytest.fixture
def gh_on(home):
    """gh-checks and gh-runs turned on (both require Bash(gh:*)), as a user turns them on."""
    for name in ("gh-checks", "gh-runs"):
        done = attend(home, "settings", "set", f"attend.sensors.{name}.enabled", "true")
        assert done.returncode == 0, done.stderr
    return home


def test_with_the_shipped_sensors_as_shipped_nothing_is_required_and_it_exits_0(home) -> None:
    out = attend(home, "permissions")
    assert out.returncode == 0 and out.stdout.strip() == "no enabled sensor requires a permission"


def test_a_missing_permission_is_printed_as_the_json_line_to_add_and_exits_1(gh_on) -> None:
    out = attend(gh_on, "permissions")
    assert out.returncode == 1, out.stderr
    assert "not allowed: Bash(gh:*) (for gh-checks, gh-runs)" in out.stdout
    assert f"in {user_settings(gh_on)} (every project) or {local_settings(gh_on)} (this project)" in out.stdout
    assert out.stdout.splitlines()[-1] == '    "Bash(gh:*)"'
    found = json.loads(attend(gh_on, "permissions", "--json").stdout)
    assert found["ok"] is False and found["add"] == ["Bash(gh:*)"]
    assert found["missing"] == [{"rule": "Bash(gh:*)", "sensors": ["gh-checks", "gh-runs"], "by": None, "file": None,
                                 "list": None}]


def test_the_line_added_to_the_projects_local_settings_satisfies_it(gh_on) -> None:
    allow(local_settings(gh_on), "Read", "Bash(gh:*)")
    out = attend(gh_on, "permissions", "--json")
    assert out.returncode == 0, out.stdout
    [allowed] = json.loads(out.stdout)["allowed"]
    assert (allowed["by"], allowed["file"]) == ("Bash(gh:*)", str(local_settings(gh_on)))
    assert attend(gh_on, "permissions").stdout.strip() == "all 1 permission the enabled sensors require is allowed"


@pytest.mark.parametrize(("rule", "allowed"), [
    ("Bash", True), ("Bash(*)", True), ("Bash(gh *)", True),
    ("Bash(gh pr:*)", False),      # only part of what gh does
    ("Bash(g:*)", False),          # a prefix is a whole word: g is not gh
    ("Bash(gh)", False),           # the bare command only
    ("WebFetch", False),
])
def test_a_rule_in_the_user_settings_allows_what_it_covers_whole(gh_on, rule, allowed) -> None:
    allow(user_settings(gh_on), rule)
    assert attend(gh_on, "permissions").returncode == (0 if allowed else 1)


def test_a_deny_or_ask_rule_covering_a_requirement_blocks_it_whatever_allows_it(gh_on) -> None:
    allow(local_settings(gh_on), "Bash(gh:*)")
    allow(user_settings(gh_on), deny=("Bash(gh:*)",))
    out = attend(gh_on, "permissions")
    assert out.returncode == 1
    assert (f"Bash(gh:*) (for gh-checks, gh-runs) is refused by the deny rule Bash(gh:*) in {user_settings(gh_on)}: "
            "an allow rule cannot override it") in out.stdout
    allow(user_settings(gh_on), ask=("Bash",))
    [blocked] = json.loads(attend(gh_on, "permissions", "--json").stdout)["blocked"]
    assert (blocked["list"], blocked["by"]) == ("ask", "Bash")
    # A deny rule for part of it (the usual way to keep the dangerous part out) blocks nothing.
    allow(user_settings(gh_on), deny=("Bash(gh pr merge:*)",))
    assert attend(gh_on, "permissions").returncode == 0


def test_a_user_sensors_mcp_and_web_requirements_are_audited_too(home) -> None:
    home.user_sensors.mkdir(parents=True, exist_ok=True)
    (home.user_sensors / "weather.yaml").write_text(
        "spec: 1\nname: weather\nkind: command\ninterval: 5m\n"
        'requires: ["mcp__github__get_pull_request", "WebFetch(domain:api.open-meteo.com)", "Bash(curl"]\n'
        "command: {argv: [curl, -sf, 'https://api.open-meteo.com/v1/forecast'], output: json}\n"
        "triggers:\n  wind: {path: $.current, on: changed, magnitude: 1, description: wind}\n")
    allow(home.project / ".claude" / "settings.json", "mcp__github", "WebFetch(domain:api.open-meteo.com)")
    out = attend(home, "permissions", "--json")
    assert out.returncode == 0, out.stdout
    found = json.loads(out.stdout)
    assert {a["rule"]: a["by"] for a in found["allowed"]} == {
        "mcp__github__get_pull_request": "mcp__github",
        "WebFetch(domain:api.open-meteo.com)": "WebFetch(domain:api.open-meteo.com)"}
    assert found["malformed"] == [{"rule": "Bash(curl", "sensors": ["weather"], "by": None, "file": None, "list": None}]
    assert "attend: requires: Bash(curl of weather is not a permission rule" in out.stderr
    # A sensor that is turned off requires nothing.
    assert attend(home, "settings", "set", "attend.sensors.weather.enabled", "false").returncode == 0
    assert json.loads(attend(home, "permissions", "--json").stdout)["allowed"] == []


def test_a_settings_file_that_is_not_json_is_said_and_its_rules_left_out(gh_on) -> None:
    allow(local_settings(gh_on), "Bash(gh:*)")
    user_settings(gh_on).parent.mkdir(parents=True, exist_ok=True)
    user_settings(gh_on).write_text('{"permissions": {"allow": ["Bash"]')
    out = attend(gh_on, "permissions")
    assert out.returncode == 0 and f"attend: {user_settings(gh_on)} not read: not JSON:" in out.stderr
    assert "Traceback" not in out.stderr


def test_doctor_warns_with_what_is_missing_and_passes_once_it_is_allowed(gh_on) -> None:
    def check() -> dict:
        done = attend(gh_on, "doctor", "--json")
        return {c["check"]: c for c in json.loads(done.stdout)["checks"]}["permissions"]

    missing = check()
    assert missing["status"] == "warn"
    assert "not allowed in Claude Code's settings: Bash(gh:*) (for gh-checks, gh-runs)" in missing["message"]
    assert "attend permissions" in missing["fix"]
    allow(user_settings(gh_on), "Bash(gh:*)")
    assert check() == {"check": "permissions", "status": "ok", "fix": "",
                       "message": "all 1 permission(s) the enabled sensors require are allowed"}


@pytest.mark.parametrize(("rule", "need", "covered"), [
    ("mcp__github", "mcp__github__get_pr", True),
    ("mcp__github__*", "mcp__github__get_pr", True),
    ("mcp__git", "mcp__github__get_pr", False),
    ("mcp__github__get_pr", "mcp__github__get_pr", True),
    ("Bash(git:*)", "Bash(git status)", True),
    ("Bash(git status:*)", "Bash(git:*)", False),
    ("Bash(npm run *)", "Bash(npm run test:*)", True),
    ("Bash(npm * --save)", "Bash(npm:*)", False),
    ("Read", "Bash(ls:*)", False),
])
def test_coverage_follows_claude_codes_matching(rule, need, covered) -> None:
    assert covers(parse_rule(rule), parse_rule(need)) is covered
