"""A fake `gh` for the tests: a real executable (the FakeGh rig copies it onto PATH as `gh`) that replays
recorded answers, with no network.

It reads `answers.json` beside itself at each call, so a test (or a running daemon's next poll) sees a
new answer as soon as the file is replaced. An answer is keyed by gh's first two arguments ("pr checks",
"run list", "pr view", "api user"): `{"data": JSON, "stdout": text, "stderr": text, "exit": code}`. With
`data`, the fake prints what gh prints for `--json FIELDS`: each object cut to the fields asked for, as
compact JSON with sorted keys; a field gh does not have is refused with gh's error. Each call is
appended to `calls.jsonl` beside it: the arguments, GH_PROMPT_DISABLED and whether stdin was a terminal.
"""

import json
import os
import sys
from pathlib import Path

#: The JSON fields gh offers for each command (gh's help, JSON FIELDS).
FIELDS = {
    "pr checks": "bucket completedAt description event link name startedAt state workflow",
    "run list": "attempt conclusion createdAt databaseId displayTitle event headBranch headSha name number "
                "startedAt status updatedAt url workflowDatabaseId workflowName",
    "pr view": "additions assignees author autoMergeRequest baseRefName baseRefOid body changedFiles closed "
               "closedAt closingIssuesReferences comments commits createdAt deletions files fullDatabaseId "
               "headRefName headRefOid headRepository headRepositoryOwner id isCrossRepository isDraft labels "
               "latestReviews maintainerCanModify mergeCommit mergeStateStatus mergeable mergedAt mergedBy "
               "milestone number potentialMergeCommit projectCards projectItems reactionGroups reviewDecision "
               "reviewRequests reviews state statusCheckRollup title updatedAt url",
}


def main(args: list[str]) -> int:
    here = Path(__file__).resolve().parent
    command = " ".join(args[:2])
    with (here / "calls.jsonl").open("a") as log:
        log.write(json.dumps({"argv": args, "GH_PROMPT_DISABLED": os.environ.get("GH_PROMPT_DISABLED"),
                              "stdin_tty": sys.stdin is not None and sys.stdin.isatty()}) + "\n")
    answer = json.loads((here / "answers.json").read_text()).get(command)
    if answer is None:
        print(f'unknown command "{args[1] if len(args) > 1 else ""}" for "gh {args[0] if args else ""}"',
              file=sys.stderr)
        return 1
    data = answer.get("data")
    if data is not None and "--json" in args:
        asked = args[args.index("--json") + 1].split(",")
        known = FIELDS.get(command, "").split()
        unknown = [f for f in asked if known and f not in known]
        if unknown:
            print(f'Unknown JSON field: "{unknown[0]}"\nAvailable fields:', file=sys.stderr)
            print("\n".join(f"  {f}" for f in known), file=sys.stderr)
            return 1

        def cut(obj):
            return {k: v for k, v in obj.items() if k in asked} if isinstance(obj, dict) else obj

        data = [cut(o) for o in data] if isinstance(data, list) else cut(data)
    out = answer.get("stdout")
    if out is None and data is not None:
        out = json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
    sys.stdout.write(out or "")
    sys.stderr.write(answer.get("stderr") or "")
    return int(answer.get("exit") or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
