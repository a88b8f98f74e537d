"""The GitHub sensors, through the gh CLI: a pull request's checks (`gh-checks`), the branch's workflow
runs (`gh-runs`), and a pull request's reviews, comments and state (`gh-reviews`) (issue 36).

They are compiled sensors rather than command files, for what a command file cannot say:

- gh's exit codes are data. ``gh pr checks`` exits 8 while a check is pending and 1 when one failed,
  with the checks on stdout either way, while a command sensor's non-zero exit is a failed poll. Here a
  JSON answer on stdout is the answer whatever the exit code, and a non-zero exit without one is gh
  saying why it could not answer.
- "The checks settled" is a fact about the whole list (nothing pending any more): one item, so one line,
  never one per check.
- The branch follows the checkout: every poll reads HEAD from git's own files (`git.read_head`) and asks
  gh about that branch, and a switch or a push polls at once (`wake_on`: HEAD and the remote-tracking
  refs). What a branch or pull request already had when the sensor first saw it is not news
  (`Baseline`): switching to a branch with twenty finished runs or thirty comments says nothing.

gh never prompts (``GH_PROMPT_DISABLED=1``, stdin closed). No gh on PATH, gh not logged in, no pull
request for the branch, no GitHub remote: `SensorUnavailable` (the `unavailable` state) with gh's words.

Results (the files' triggers read them; `sensors.d/gh-*.test.yaml` replay them)::

    gh-checks:  {"branch", "rollup": "none|pending|pass|fail|cancel", "counts": {bucket: n}, "total",
                 "checks": [gh's checks], "settled": [{"id", "rollup", "branch", "total", "passed",
                 "failed_count", "failed", "cancelled"}]}
    gh-runs:    {"branch", "head", "in_progress", "completed": [{"id": "<databaseId>/<attempt>", "run",
                 "attempt", "name", "label", "conclusion", "url", "commit", "current", "branch"}]}
    gh-reviews: {"branch", "number", "url", "state", "draft", "decision", "merge_state", "base",
                 "reviews": [{"id", "number", "author", "state", "said"}],
                 "comments": [{"id", "number", "author", "first_line", "url"}],
                 "conditions": [{"id", "number", "condition", "base", "by"}]}
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attend import children
from attend.children import ChildTimeout
from attend.sensors.base import Focus, SensorUnavailable, require, require_seconds
from attend.sensors.git import Head, git_dirs, read_head
from attend.text import one_line, quoted

if TYPE_CHECKING:
    from attend.vocab import JSON, JSONObject

__all__ = ["GH_ENV_OVERRIDES", "Baseline", "ChecksSensor", "Gh", "ReviewsSensor", "RunsSensor", "checkout",
           "first_line", "rollup_of"]

#: The environment every gh command runs with: never a prompt, no update notice, no spinner, no colour.
GH_ENV_OVERRIDES: dict[str, str] = {
    "GH_PROMPT_DISABLED": "1",
    "GH_NO_UPDATE_NOTIFIER": "1",
    "GH_SPINNER_DISABLED": "1",
    "NO_COLOR": "1",
}

#: The fields each command asks gh for (`--json`), as gh names them.
CHECK_FIELDS = "name,state,bucket,link,workflow,completedAt"
RUN_FIELDS = "databaseId,name,status,conclusion,headSha,url,attempt,updatedAt"
REVIEW_FIELDS = "number,url,baseRefName,reviewDecision,latestReviews,reviews,comments,mergeStateStatus,isDraft,state"

#: The exit codes of ``gh pr checks`` that come with the checks on stdout: all passed, one failed, pending.
CHECKS_DATA_EXITS = (0, 1, 8)

#: How many failed (or cancelled) checks a settled line names; the rest are counted.
LISTED_CHECKS = 5

#: The most characters of a comment or review a line quotes (its first line).
FIRST_LINE_CHARS = 200

#: Review states that are no review (yet, or any more).
NOT_A_REVIEW = ("PENDING", "DISMISSED")


@dataclass(frozen=True, slots=True)
class GhAnswer:
    """What one gh command did: its exit code and output."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def words(self) -> str:
        """What gh said about why it could not answer: its stderr on one line (its exit code without one)."""
        said = " ".join(line.strip() for line in self.stderr.splitlines() if line.strip())
        return quoted(f"gh {' '.join(self.args[:2])}: {said or f'exit status {self.code}'}")

    def json(self) -> JSON:
        """stdout as JSON; `SensorUnavailable` with gh's words when it is not."""
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise SensorUnavailable(self.words()) from None


class Gh:
    """Runs gh in the project with the poll's environment (`focus.env`) and `GH_ENV_OVERRIDES`
    (`attend.children.run`: its own process group, ended past `command_timeout`)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.program: str = require(config, "gh", str)
        self.timeout = require_seconds(config, "command_timeout")

    def run(self, focus: Focus, *args: str) -> GhAnswer:
        """`gh ARGS` in the focus directory, stdin closed.

        Raises:
            SensorUnavailable: gh is not installed (or cannot run), or took longer than `command_timeout`.
        """
        try:
            done = children.run([self.program, *args], env={**focus.env, **GH_ENV_OVERRIDES}, cwd=focus.cwd,
                                timeout=self.timeout)
        except FileNotFoundError:
            raise SensorUnavailable(f"{self.program} is not installed (not found on PATH); "
                                    "the GitHub sensors run the gh CLI") from None
        except OSError as exc:
            raise SensorUnavailable(f"cannot run {self.program}: {exc.strerror or exc}") from None
        except ChildTimeout:
            raise SensorUnavailable(f"gh {' '.join(args[:2])} took longer than {self.timeout:g} s") from None
        return GhAnswer(tuple(args), done.returncode, done.out_text, done.err_text)

    def json(self, focus: Focus, *args: str) -> JSON:
        """gh's JSON answer to `ARGS`; `SensorUnavailable` with gh's words when it exits non-zero."""
        answer = self.run(focus, *args)
        if answer.code != 0:
            raise SensorUnavailable(answer.words())
        return answer.json()


def checkout(focus: Focus) -> Head:
    """The branch (and commit) checked out in the focus directory.

    Raises:
        SensorUnavailable: no git repository, or a detached HEAD (gh has no branch to look up).
    """
    head = read_head(focus.cwd)
    if head is None:
        raise SensorUnavailable(f"no git repository at {focus.cwd}: no branch to ask gh about")
    if not head.branch:
        raise SensorUnavailable("HEAD is detached: no branch to ask gh about")
    return head


def first_line(text: Any, limit: int = FIRST_LINE_CHARS) -> str:
    """The first non-blank line of `text`, printable, cut to `limit` characters; empty for no text."""
    if not isinstance(text, str):
        return ""
    line = next((line for line in text.splitlines() if line.strip()), "")
    return one_line(line, limit)


class Baseline:
    """What a subject (a branch, a pull request) already had when the sensor first saw it.

    `fresh(subject, ids)` is the ids that are news: none on the first poll of a subject (they are its
    baseline), then every id the baseline does not hold. An id of the baseline that goes away leaves it,
    so a condition that clears and comes back (merge conflicts) is news the second time.
    """

    def __init__(self) -> None:
        self.subject: str | None = None
        self.held: set[str] = set()

    def fresh(self, subject: str, ids: Iterable[str]) -> set[str]:
        current = set(ids)
        if subject != self.subject:
            self.subject, self.held = subject, current
            return set()
        self.held &= current
        return current - self.held

    def export(self) -> dict[str, Any]:
        return {"subject": self.subject, "held": sorted(self.held)}

    def restore(self, state: Any) -> None:
        if isinstance(state, dict) and isinstance(state.get("subject"), str):
            self.subject = state["subject"]
            self.held = {h for h in state.get("held") or [] if isinstance(h, str)}


class _GhSensor:
    """What the three share: gh, the baseline, the state and the wake paths."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.gh = Gh(config)
        self.baseline = Baseline()

    def export_state(self) -> dict[str, Any]:
        return {"baseline": self.baseline.export()}

    def import_state(self, state: Any) -> None:
        if isinstance(state, dict):
            self.baseline.restore(state.get("baseline"))

    def wake_on(self, focus: Focus) -> list[str]:
        """HEAD (a branch switch) and the remote-tracking refs (a push starts checks and runs)."""
        found = git_dirs(focus.cwd)
        gitdir, common = found if found is not None else (focus.cwd / ".git", focus.cwd / ".git")
        return [str(gitdir / "HEAD"), str(Path(common) / "refs" / "remotes" / "**")]


def rollup_of(counts: Mapping[str, int]) -> str:
    """The state of a set of checks from their buckets: `none` (no checks), `pending` while any is,
    then `fail` if any failed, `cancel` if any was cancelled, else `pass` (skipped ones count as passed)."""
    if not sum(counts.values()):
        return "none"
    for bucket in ("pending", "fail", "cancel"):
        if counts.get(bucket):
            return bucket
    return "pass"


def _listed(checks: list[JSONObject], bucket: str) -> str:
    named = [f"{c.get('name')}: {c.get('link')}" if c.get("link") else str(c.get("name"))
             for c in checks if c.get("bucket") == bucket]
    more = len(named) - LISTED_CHECKS
    return "; ".join(named[:LISTED_CHECKS]) + (f"; and {more} more" if more > 0 else "")


class ChecksSensor(_GhSensor):
    """The checks of the current branch's pull request (``gh pr checks BRANCH --json ...``), and one item
    in `settled` once none is pending: its `rollup` and the failed checks with their links.

    Crate fields (``sensors.d/gh-checks.yaml``): `gh` (the program), `command_timeout`.
    """

    def poll(self, focus: Focus) -> JSONObject:
        head = checkout(focus)
        answer = self.gh.run(focus, "pr", "checks", head.branch, "--json", CHECK_FIELDS)
        if answer.code in CHECKS_DATA_EXITS and answer.stdout.strip():
            checks = answer.json()
        elif answer.code != 0 and "no checks reported" in answer.stderr:
            checks = []  # a pull request without checks (yet): gh says so on stderr and exits 1
        else:
            raise SensorUnavailable(answer.words())
        if not isinstance(checks, list):
            raise SensorUnavailable(f"gh pr checks: expected a list of checks, got {type(checks).__name__}")
        found = [c for c in checks if isinstance(c, dict)]
        counts = Counter(str(c.get("bucket")) for c in found)
        rollup = rollup_of(counts)
        settled: list[JSONObject] = []
        if rollup not in ("none", "pending"):
            # One run of the checks: a re-run or a new push finishes at other times, so it is another item.
            facts = sorted(json.dumps([c.get("name"), c.get("bucket"), c.get("completedAt")]) for c in found)
            facts_hash = hashlib.sha256("\n".join(facts).encode()).hexdigest()[:12]
            settled.append({"id": f"{head.branch}/{facts_hash}", "rollup": rollup, "branch": head.branch,
                            "total": len(found), "passed": counts["pass"] + counts["skipping"],
                            "failed_count": counts["fail"], "failed": _listed(found, "fail"),
                            "cancelled": _listed(found, "cancel")})
        fresh = self.baseline.fresh(head.branch, (str(s["id"]) for s in settled))
        listed: list[JSON] = [*found]
        return {"branch": head.branch, "rollup": rollup, "counts": dict(sorted(counts.items())), "total": len(found),
                "checks": listed, "settled": [s for s in settled if s["id"] in fresh]}


class RunsSensor(_GhSensor):
    """The workflow runs of the current branch (``gh run list --branch BRANCH --json ...``): each run that
    completed since the sensor first saw the branch, keyed by run and attempt (a re-run is a new item).

    Crate fields (``sensors.d/gh-runs.yaml``): `gh`, `command_timeout`, `limit` (runs asked for).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(config)
        self.limit: int = require(config, "limit", int)

    def poll(self, focus: Focus) -> JSONObject:
        head = checkout(focus)
        runs = self.gh.json(focus, "run", "list", "--branch", head.branch, "--limit", str(self.limit),
                            "--json", RUN_FIELDS)
        if not isinstance(runs, list):
            raise SensorUnavailable(f"gh run list: expected a list of runs, got {type(runs).__name__}")
        found = [r for r in runs if isinstance(r, dict)]
        completed: list[JSONObject] = []
        for run in found:
            if run.get("status") != "completed":
                continue
            attempt = given if isinstance(given := run.get("attempt"), int) else 1
            sha = str(run.get("headSha") or "")
            name = str(run.get("name") or "")
            completed.append({"id": f"{run.get('databaseId')}/{attempt}", "run": run.get("databaseId"),
                              "attempt": attempt, "name": name,
                              "label": name if attempt <= 1 else f"{name} (attempt {attempt})",
                              "conclusion": str(run.get("conclusion") or ""), "url": str(run.get("url") or ""),
                              "commit": sha[:7], "current": bool(sha) and sha == head.sha, "branch": head.branch})
        fresh = self.baseline.fresh(head.branch, (str(r["id"]) for r in completed))
        return {"branch": head.branch, "head": head.sha,
                "in_progress": sum(1 for r in found if r.get("status") != "completed"),
                "completed": [r for r in completed if r["id"] in fresh]}


def _items(value: JSON) -> list[JSON]:
    """A list gh answered with; anything else (a field it left out or null) holds no items."""
    return value if isinstance(value, list) else []


def _login(value: JSON) -> str:
    return str(value.get("login") or "") if isinstance(value, dict) else ""


class ReviewsSensor(_GhSensor):
    """The current branch's pull request (``gh pr view BRANCH --json ...``): new reviews and comments by
    someone else than gh's user (``gh api user``, asked once), and its conditions: merge conflicts, merged,
    closed, and the review decision when it is approved or changes requested.

    GitHub says `UNKNOWN` for the merge state while it computes it; the last known one stands meanwhile, so
    conflicts that stay are not news again. Crate fields (``sensors.d/gh-reviews.yaml``): `gh`,
    `command_timeout`.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(config)
        self.viewer = ""
        self.merge_state: dict[str, str] = {}

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "viewer": self.viewer, "merge_state": self.merge_state}

    def import_state(self, state: Any) -> None:
        super().import_state(state)
        if isinstance(state, dict):
            self.viewer = str(state.get("viewer") or "")
            merge = state.get("merge_state")
            self.merge_state = {str(k): str(v) for k, v in merge.items()} if isinstance(merge, dict) else {}

    def poll(self, focus: Focus) -> JSONObject:
        head = checkout(focus)
        if not self.viewer:
            self.viewer = _login(self.gh.json(focus, "api", "user"))
        pr = self.gh.json(focus, "pr", "view", head.branch, "--json", REVIEW_FIELDS)
        if not isinstance(pr, dict):
            raise SensorUnavailable(f"gh pr view: expected a pull request, got {type(pr).__name__}")
        number = pr.get("number")
        base = str(pr.get("baseRefName") or "")

        reviews: list[JSONObject] = []
        for review in _items(pr.get("reviews")):
            if not isinstance(review, dict) or review.get("state") in NOT_A_REVIEW:
                continue
            author = _login(review.get("author"))
            if author and author == self.viewer:
                continue
            said = first_line(review.get("body"))
            reviews.append({"id": str(review.get("id")), "number": number, "author": author,
                            "state": str(review.get("state")), "said": f": {said}" if said else ""})
        comments: list[JSONObject] = []
        for comment in _items(pr.get("comments")):
            if not isinstance(comment, dict) or comment.get("viewerDidAuthor"):
                continue
            author = _login(comment.get("author"))
            if author and author == self.viewer:
                continue
            comments.append({"id": str(comment.get("id")), "number": number, "author": author,
                             "first_line": first_line(comment.get("body")), "url": str(comment.get("url") or "")})

        known = str(number)
        merge_state = str(pr.get("mergeStateStatus") or "")
        if merge_state and merge_state != "UNKNOWN":
            self.merge_state = {known: merge_state}  # one pull request's at a time
        merge_state = self.merge_state.get(known, merge_state)
        decision = str(pr.get("reviewDecision") or "")
        conditions = []
        if merge_state == "DIRTY":
            conditions.append("conflicts")
        if pr.get("state") in ("MERGED", "CLOSED"):
            conditions.append(str(pr["state"]).lower())
        if decision in ("APPROVED", "CHANGES_REQUESTED"):
            conditions.append(decision.lower())
        latest = [r for r in _items(pr.get("latestReviews")) if isinstance(r, dict)]
        facts: list[JSONObject] = [{"id": f"{number}/{c}", "number": number, "condition": c, "base": base,
                  "by": ", ".join(_login(r.get("author")) for r in latest if str(r.get("state")).lower() == c)}
                 for c in conditions]

        fresh = self.baseline.fresh(known, [str(i["id"]) for i in (*reviews, *comments, *facts)])
        return {"branch": head.branch, "number": number, "url": str(pr.get("url") or ""), "state": pr.get("state"),
                "draft": bool(pr.get("isDraft")), "decision": decision, "merge_state": merge_state, "base": base,
                "reviews": [r for r in reviews if r["id"] in fresh],
                "comments": [c for c in comments if c["id"] in fresh],
                "conditions": [f for f in facts if f["id"] in fresh]}
