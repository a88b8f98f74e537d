"""The one redaction policy: what of a credential any text attend shows may hold (nothing).

Every text attend turns data into (a notification line, the journal, the history, a hook's output,
explain, the sensors tab, `--json`, `sensors poll`/`fire`, doctor) passes through `attend.text`, and
`text.printable`, `text.json_text` and every cut (`text.one_line`, `text.quoted`, a description's
`RENDER_LIMIT`, the processes sensor's `cmdline_limit`) call this module first: redaction is part of
the one escaping path, not a pass of its own somewhere. Each match becomes `MARK` (`<redacted>`):

- an environment assignment whose NAME (upper case, as environment names are written) contains KEY,
  TOKEN, SECRET, PASSWORD, PASSWD, PASS, CREDENTIAL, AUTH, COOKIE or SESSION: `ANTHROPIC_API_KEY=sk-…`,
  `env FOO_TOKEN=… cmd` → `ANTHROPIC_API_KEY=<redacted>`; and, in any case, a name containing token,
  secret, password, passwd, credential, cookie or api_key/apikey (`?access_token=…`, `password=…`);
- the value after a credential flag, `--token X`, `--token=X`, `--password`, `--passwd`, `--pass`,
  `--secret`, `--api-key`, `--apikey`, `--auth`, `--credential(s)`, `--cookie`, also with a prefix
  (`--client-secret`, `--access-token`, `--db-password`); a following `-flag` is not taken as its value;
- `-p` with its value attached (`-pSECRET`) only after the MySQL and MariaDB clients (`mysql`,
  `mysqldump`, `mysqladmin`, `mariadb`, `mariadb-dump`), where it is the password, and `sshpass -p X`:
  anywhere else `-p` means a port, parents, a pid or a preserve flag, and stays;
- URL user info with a password (`https://user:pass@host` → `https://<redacted>@host`);
- `Authorization:`/`Proxy-Authorization:` values (the scheme word kept: `Authorization: Bearer
  <redacted>`), a `Bearer X` elsewhere when X is a token (16 characters or more, or 8 with a digit), and a
  `Cookie:`/`Set-Cookie:` header's value;
- well-known token shapes: `sk-…` (`sk-ant-…`, `sk-proj-…`), GitHub's `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`
  and `github_pat_`, GitLab's `glpat-`, Slack's `xox[abpr]-`, AWS access key ids `AKIA…`/`ASIA…`, JWTs
  (`eyJ….eyJ….…`);
- whatever the user's own patterns (`attend.redact`, a list of regular expressions in config.yaml or a
  project's .claude/attend.yaml) match: each whole match. `use(patterns)` puts them in force for this
  process; reading the config (`spec.config.load_config`) does it, so a running daemon applies a changed
  list at its hot reload. They run on the `regex` module with a timeout (`PATTERN_TIMEOUT_SECONDS`, as
  the `matches` operator does), since a file, a project's too, may hold a pattern that backtracks
  catastrophically: a text on which they run past it is shown as `MARK` whole (what the pattern would
  hide there cannot be known), each pattern that runs past it alone on that text is taken out of force
  for this process (until `use` is handed another list), and `on_stall`'s reporter is told which (the
  daemon logs it). So one stall costs at most the timeout per pattern in force, once.

In structured data (`redact_data`, what `json_text` prints) each string is redacted, and the string
under a mapping key that names a credential (`env: {API_TOKEN: …}`) is `MARK` whole; a short list of
strings (an argv) is redacted as the command line it stands for, so the element after `--token` is too.

A cut never leaves a secret's prefix: `shorten` redacts first, then cuts, dropping a `MARK` the cut
would split (`ANTHROPIC_API_KEY=<redac…` becomes `ANTHROPIC_API_KEY=…`), so a mark is whole or gone.

Cost: nothing is compiled at import (`lazyre`); the built-in pattern is compiled at the first text
redacted, the user's patterns at the first text after `use`. A hook with nothing to hand over redacts
nothing, so it pays for neither (benchmarks/hooks).
"""

from __future__ import annotations

import re

from attend import lazyre

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    import regex

    from attend.lazyre import LazyPattern

__all__ = ["MARK", "credential_name", "cut", "pattern_problem", "redact", "redact_data", "shorten", "use", "user_patterns"]

#: What a redacted secret reads as.
MARK = "<redacted>"

#: The words an environment name holds when its value is a credential (issue 33).
_ENV_WORDS = "KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIAL|AUTH|COOKIE|SESSION"
#: The same in any case, without the words too common in lower case to mean a credential (key, session, auth, pass).
_ANY_CASE_WORDS = "token(?!s)|secret|password|passwd|credential|cookie|api_?key"
#: A value: a quoted string (up to its closing quote, or to the end when a cut took it), else a run of
#: characters up to white space or a quote, not starting with `<` (a placeholder already shown in its
#: stead: `<redacted>`, `<hidden: 12 characters>`).
_VALUE = r"""(?:"[^"]*"?|'[^']*'?|(?!<)[^\s"'`]+)"""
#: A flag's value: the same, but never another flag.
_FLAG_VALUE = r"""(?:"[^"]*"?|'[^']*'?|(?![-<])[^\s"'`]+)"""
_FLAG_WORDS = r"token|password|passwd|pass|secret|api-?key|apikey|auth|credentials?|cookie"

def _rule(needles: tuple[str, ...], pattern: str, *, lower: bool = False) -> tuple[tuple[str, ...], bool, LazyPattern]:
    """One rule: run `pattern` only on a text holding one of `needles` (in its lower-case form with
    `lower`); its group `keep`, when it has one, stays in front of the mark."""
    return needles, lower, lazyre.compile(pattern, lazyre.ASCII)  # ASCII: a Unicode `\s` in a class costs a 64K map


#: The built-in rules, in order; each is compiled the first time a text holds one of its needles, so a text
#: with none of them costs a few substring tests, and a short line compiles only the rule it may need.
_RULES = (
    # NAME=value (environment names are upper case); the lookaheads find the word in linear time
    _rule(("KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"),
          rf"(?P<keep>(?<![A-Za-z0-9_])(?=[A-Z0-9_]*?(?:{_ENV_WORDS}))[A-Z0-9_]+=){_VALUE}"),
    _rule(("token", "secret", "passw", "credential", "cookie", "apikey", "api_key"),
          rf"(?P<keep>(?<![A-Za-z0-9_])(?=(?i:[a-z0-9_]*?(?:{_ANY_CASE_WORDS})))(?i:[a-z0-9_]+)=){_VALUE}", lower=True),
    # --token X, --token=X, --client-secret X
    _rule(("--",), rf"(?P<keep>(?<![\w-])--(?:[A-Za-z0-9]+[-_])*(?i:{_FLAG_WORDS})(?:=|[ \t]+)){_FLAG_VALUE}"),
    # mysql -pSECRET, sshpass -p SECRET
    _rule(("mysql", "mariadb"), r"(?P<keep>(?<![\w-])(?:mysql(?:dump|admin)?|mariadb(?:-dump)?)\b[^\n|;&]*?[ \t]-p)(?=[^\s-])"
          + _VALUE),
    _rule(("sshpass",), rf"(?P<keep>(?<![\w-])sshpass[ \t]+-p[ \t]*){_VALUE}"),
    # scheme://user:password@host → scheme://<redacted>@host
    _rule(("://",), r"(?P<keep>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@:\"'`]+:[^\s/?#@\"'`]*(?=@)"),
    # Authorization: Bearer X, Proxy-Authorization: Basic X, Bearer X, Cookie: a=b; c=d
    _rule(("authorization",), r"(?P<keep>(?i:\b(?:proxy-)?authorization)[ \t]*[:=][ \t]*"
          r"(?>(?:(?i:bearer|basic|token|digest|negotiate)[ \t]+)?))"  # a scheme word is one, never the value
          r"(?!(?i:bearer|basic|token|digest|negotiate)(?:[ \t]|$))" + _VALUE, lower=True),
    # a Bearer token on its own: RFC 6750's b64token, 16 characters or more, or 8 with a digit (prose's
    # "bearer token" and a challenge's `Bearer error="invalid_token"` stay)
    _rule(("bearer",), r"(?P<keep>(?i:\bbearer)[ \t]+)(?:(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{8,}"
          r"|[A-Za-z0-9._~+/-]{16,})=*", lower=True),
    _rule(("cookie",), r"(?P<keep>(?i:\b(?:set-)?cookie)[ \t]*:[ \t]*)[^\r\n\"'`]+", lower=True),
    # token shapes
    _rule(("sk-",), r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}"),
    _rule(("gh", "github_pat_"), r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    _rule(("glpat-",), r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}"),
    _rule(("xox",), r"(?<![A-Za-z0-9_-])xox[abpr]-[A-Za-z0-9-]{10,}"),
    _rule(("AKIA", "ASIA"), r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _rule(("eyJ",), r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
)

#: Every rule's needles as one pattern over the lower-cased text (a superset of what each rule looks for): a text
#: holding none of them, as most descriptions do, is passed by one search instead of a substring test per needle.
#: (Searched in the lower-cased text: an IGNORECASE alternation takes 5-10 times as long.)
_ANY_NEEDLE = lazyre.compile("|".join(sorted({re.escape(n.lower()) for needles, _, _ in _RULES for n in needles})))

#: A mapping key that names a credential: its string value is redacted whole (`redact_data`).
_CREDENTIAL_KEY = lazyre.compile(rf"[A-Z0-9_]*(?:{_ENV_WORDS})[A-Z0-9_]*|(?i:[a-z0-9_-]*(?:{_ANY_CASE_WORDS}|authorization)[a-z0-9_-]*)")

_user: tuple[str, ...] = ()
_user_compiled: regex.Pattern[str] | None = None  # (`regex` is imported only when a user pattern runs)
#: The user's patterns taken out of force in this process because they ran past the timeout.
_stalled: tuple[str, ...] = ()
_report: Callable[[str], object] | None = None


def _replace(match: re.Match[str]) -> str:
    kept = match.groupdict().get("keep")
    return MARK if kept is None else kept + MARK


def redact(text: str) -> str:
    """`text` with every credential the policy knows (and the user's patterns match) as `MARK`."""
    low: str | None = text.lower()  # the lower-case rules read it too, until a rule changes the text
    if _ANY_NEEDLE.search(low) is None:
        return _user_redact(text) if _user else text
    for needles, lower, pattern in _RULES:
        if lower:
            if low is None:
                low = text.lower()
            where = low
        else:
            where = text
        if any(needle in where for needle in needles):
            text = pattern.sub(_replace, text)
            if lower:
                low = None  # the text changed
    if _user:
        text = _user_redact(text)
    return text


def credential_name(key: object) -> bool:
    """Whether a mapping key names a credential (`API_TOKEN`, `password`, `Authorization`)."""
    return isinstance(key, str) and _CREDENTIAL_KEY.fullmatch(key) is not None


def redact_data(value: Any) -> Any:
    """`value` (JSON-like data) with each string redacted, and a non-empty string under a key that names a
    credential (`credential_name`) as `MARK` whole; mappings and lists are copied, the rest kept."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: MARK if isinstance(v, str) and v and credential_name(k) else redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if 1 < len(value) <= ARGV_CONTEXT and all(isinstance(v, str) for v in value):
            return _argv(value)
        return [redact_data(v) for v in value]
    return value


#: The longest list of strings read as an argv (each element redacted in the context of those before it).
ARGV_CONTEXT = 64


def _argv(items: Sequence[str]) -> list[str]:
    """A list of strings (an argv) redacted as the command line it stands for: each element in the context
    of the elements before it, so `[tool, --token, X]`, `[curl, -H, Authorization:, Bearer, X]` and `[mysql,
    -uroot, -pX]` hide X as `tool --token X` would. When its context changed what came before it (a rule
    that ran across the boundary), an element the redacted line no longer shows is `MARK` whole."""
    out: list[str] = []
    before = ""
    for n, item in enumerate(items):
        line = redact(" ".join(items[: n + 1]))
        head = before + " " if n else ""
        if line.startswith(head):
            out.append(line[len(head):])
        else:  # a rule ran across the boundary: the element as it is if the line still shows it, else hidden
            out.append(redact(item) if item in line else MARK)
        before = line
    return out


def shorten(text: str, limit: int, ellipsis: str = "…") -> str:
    """`text` redacted, then cut to at most `limit` characters (ending in `ellipsis` when cut) so that no
    `MARK` is split: a mark the cut would reach into is dropped whole, never left as `<redac`."""
    return cut(redact(text), limit, ellipsis)


def cut(text: str, limit: int, ellipsis: str = "…") -> str:
    """Already redacted `text` cut to at most `limit` characters (`shorten` without the redaction: for a
    caller whose text went through `redact` already, as `text.one_line`'s did through `printable`)."""
    if len(text) <= limit:
        return text
    end = max(limit - len(ellipsis), 0)
    start = text.rfind("<", max(end - len(MARK), 0), end)
    if start >= 0 and text.startswith(MARK, start) and start + len(MARK) > end:
        end = start
    return text[:end] + ellipsis


def pattern_problem(pattern: object) -> str | None:
    """Why `pattern` cannot be one of `attend.redact`'s patterns (a message), or None."""
    if not isinstance(pattern, str):
        return "a pattern is a string (a regular expression)"
    if not pattern:
        return "an empty pattern matches everywhere"
    from attend.bounds import pattern_shape

    shape = pattern_shape(pattern)
    if shape.problem is not None:
        return shape.problem
    import regex  # what the pattern runs on (`redact`)

    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return f"not a regular expression: {exc}"
    if compiled.search("") is not None:
        return "the pattern matches the empty text, so it would match everywhere"
    return None


def use(patterns: Iterable[str]) -> None:
    """Put the user's `patterns` in force (checked ones: `spec.config` leaves out what `pattern_problem`
    refuses); nothing is compiled until the first text redacted after this. A list other than the one in
    force puts back in force the patterns a stall took out."""
    global _user, _user_compiled, _given, _stalled
    wanted = tuple(dict.fromkeys(patterns))
    if wanted != _given:
        _given, _user, _user_compiled, _stalled = wanted, wanted, None, ()


_given: tuple[str, ...] = ()  # the list `use` was handed last (`_user` less what stalled)


def user_patterns() -> tuple[str, ...]:
    """The user's patterns in force."""
    return _user


def stalled() -> tuple[str, ...]:
    """The user's patterns taken out of force in this process because they ran past the timeout."""
    return _stalled


def on_stall(report: Callable[[str], object] | None) -> None:
    """Tell `report` (one sentence) each time a user pattern is taken out of force (None: tell no one)."""
    global _report
    _report = report


def _user_pattern() -> regex.Pattern[str]:
    global _user_compiled
    if _user_compiled is None:
        import regex

        good = [p for p in _user if pattern_problem(p) is None]  # `use` was handed unchecked ones: never fail
        _user_compiled = regex.compile("|".join(f"(?:{p})" for p in good) if good else "(?!)")
    return _user_compiled


def _user_redact(text: str) -> str:
    """`text` with the user's patterns' matches as `MARK`, each search bounded by the timeout; on a stall,
    `MARK` whole, and the patterns that stall alone on `text` out of force (`on_stall` told)."""
    from attend.bounds import PATTERN_TIMEOUT_SECONDS

    try:
        return str(_user_pattern().sub(MARK, text, timeout=PATTERN_TIMEOUT_SECONDS))
    except TimeoutError:
        pass
    global _user, _user_compiled, _stalled
    import regex

    culprits = []
    for pattern in _user:
        try:
            regex.compile(pattern).search(text, timeout=PATTERN_TIMEOUT_SECONDS)
        except TimeoutError:
            culprits.append(pattern)
        except regex.error:
            pass  # refused by `pattern_problem`, never compiled into the search
    culprits = culprits or list(_user)  # only together past the timeout: all of them, or the next text stalls too
    if culprits:
        _user = tuple(p for p in _user if p not in culprits)
        _user_compiled = None
        _stalled = (*_stalled, *culprits)
        if _report is not None:
            for pattern in culprits:
                _report(f"attend.redact: the pattern {pattern!r} ran past {PATTERN_TIMEOUT_SECONDS:g} s on a "
                        f"{len(text):,}-character text (it backtracks catastrophically): that text is shown as "
                        f"{MARK} and the pattern is no longer applied until the config changes; fix or remove it "
                        "in config.yaml or the project's .claude/attend.yaml")
    return MARK
