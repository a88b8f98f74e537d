"""gh's answers as gh prints them for the `--json` fields the GitHub sensors ask for (shapes from gh's
manual and its JSON FIELDS lists; values made up), for the fake gh to replay (sensor_material.FakeGh)."""

from __future__ import annotations

import zlib
from typing import Any

REPO = "https://github.com/acme/widgets"

#: gh's bucket for each check state (gh pr checks: pass, fail, pending, skipping, cancel).
BUCKETS = {"SUCCESS": "pass", "FAILURE": "fail", "ERROR": "fail", "TIMED_OUT": "fail", "ACTION_REQUIRED": "fail",
           "CANCELLED": "cancel", "SKIPPED": "skipping", "NEUTRAL": "skipping", "QUEUED": "pending",
           "IN_PROGRESS": "pending", "PENDING": "pending"}

#: What gh prints as the completion time of a check that has not completed (Go's zero time).
NOT_COMPLETED = "0001-01-01T00:00:00Z"

NO_PULL_REQUEST = 'no pull requests found for branch "feature"\n'
NOT_LOGGED_IN = ("To get started with GitHub CLI, please run:  gh auth login\n"
                 "Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token.\n")


def check(name: str, state: str, *, job: int = 1, minute: int = 14, workflow: str = "CI") -> dict[str, Any]:
    """One entry of `gh pr checks --json`."""
    bucket = BUCKETS[state]
    return {"bucket": bucket, "completedAt": NOT_COMPLETED if bucket == "pending" else f"2026-03-02T10:{minute:02d}:31Z",
            "description": "", "event": "pull_request", "link": f"{REPO}/actions/runs/1357/job/{job}", "name": name,
            "startedAt": "2026-03-02T10:12:02Z", "state": state, "workflow": workflow}


def run(database_id: int, status: str, conclusion: str = "", *, attempt: int = 1, sha: str = "a" * 40,
        name: str = "CI", branch: str = "feature", minute: int = 20) -> dict[str, Any]:
    """One entry of `gh run list --json` (conclusion is empty until the run completes)."""
    return {"attempt": attempt, "conclusion": conclusion, "createdAt": "2026-03-02T10:12:00Z", "databaseId": database_id,
            "displayTitle": "Add caching", "event": "pull_request", "headBranch": branch, "headSha": sha, "name": name,
            "number": 412, "startedAt": "2026-03-02T10:12:02Z", "status": status,
            "updatedAt": f"2026-03-02T10:{minute:02d}:00Z", "url": f"{REPO}/actions/runs/{database_id}",
            "workflowDatabaseId": 9001, "workflowName": name}


def review(review_id: str, login: str, state: str, body: str = "") -> dict[str, Any]:
    """One entry of `reviews` / `latestReviews` in `gh pr view --json`."""
    return {"author": {"login": login}, "authorAssociation": "MEMBER", "body": body,
            "commit": {"oid": "a" * 40}, "id": review_id, "includesCreatedEdit": False, "reactionGroups": [],
            "state": state, "submittedAt": "2026-03-02T11:00:00Z"}


def comment(comment_id: str, login: str, body: str, *, mine: bool = False, number: int = 7) -> dict[str, Any]:
    """One entry of `comments` in `gh pr view --json` (viewerDidAuthor: gh's user wrote it)."""
    return {"author": {"login": login}, "authorAssociation": "MEMBER" if not mine else "OWNER", "body": body,
            "createdAt": "2026-03-02T11:05:00Z", "id": comment_id, "includesCreatedEdit": False, "isMinimized": False,
            "minimizedReason": "", "reactionGroups": [], "url": f"{REPO}/pull/{number}#issuecomment-{zlib.crc32(comment_id.encode())}",
            "viewerDidAuthor": mine}


def pull_request(*, number: int = 7, decision: str = "REVIEW_REQUIRED", merge_state: str = "BLOCKED",
                 state: str = "OPEN", reviews: list | None = None, latest: list | None = None,
                 comments: list | None = None, draft: bool = False) -> dict[str, Any]:
    """`gh pr view --json` for a pull request from `feature` into `main` (more fields than asked for: the fake
    cuts them as gh does)."""
    return {"author": {"id": "U_1", "is_bot": False, "login": "ada-bot", "name": "Ada"}, "baseRefName": "main",
            "body": "Adds a cache.", "comments": comments or [], "headRefName": "feature", "isDraft": draft,
            "latestReviews": latest if latest is not None else (reviews or []), "mergeStateStatus": merge_state,
            "number": number, "reviewDecision": decision, "reviews": reviews or [], "state": state,
            "title": "Add caching", "url": f"{REPO}/pull/{number}"}


#: `gh api user` for the logged-in user (the session's own account).
VIEWER = {"avatar_url": "https://avatars.githubusercontent.com/u/1", "id": 1, "login": "ada-bot", "name": "Ada",
          "type": "User"}
