"""No credential of any process reaches the model: the shipped processes sensor in a real interactive Claude
Code session with the attend plugin, read from the requests the real CLI sends (host_rig.py)."""

from __future__ import annotations

import json
import subprocess

from host_rig import polled
from waiting import PATIENCE, wait_until

#: Credentials as a user's processes carry them on their command lines (made up, of real shapes), each with
#: a piece of it that nothing else says: neither may reach the model (a cut must not leave a secret's start).
SECRETS = {
    "ghp_" + "R1gT0kenAbCdEfGhIjKlMnOpQrStUvWxYz12": "R1gT0ken",
    "sk-ant-api03-" + "rigSecretKey0123456789abcdefghijklmnopqrstuvwxyzABCD-EFGH": "rigSecret",
    "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJyaWctdGVzdCJ9." + "c2lnbmF0dXJlLW9mLXRoZS1yaWc": "eyJhbGciOiJIUzI1NiJ9",
}
GITHUB_TOKEN, ANTHROPIC_KEY, BEARER = SECRETS


def test_no_secret_from_any_process_appears_in_any_request(claude_host, quiet_home):
    host, home = claude_host, quiet_home
    # The shipped processes sensor, on, polling every second, and every start it sees a high line (a user
    # who turned it up): whatever policy decides which lines go out, none may carry a credential.
    home.write_user_sensor("processes", "spec: 1\nenabled: true\ninterval: 1s\nmin_interval: 1s\n"
                                        "triggers:\n  started:\n    magnitude: 5\n")
    # Every line goes out as it comes: the rig's own tmux server works in the project too, and its start, a
    # high line 2 s after the sensor's baseline (min_lifetime), held the launchers' lines for the absolute
    # refractory's 60 s, past the test's wait.
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("engagement:\n  absolute_refractory: 0\n"
                                "governor:\n  event: {cooldown: 0.1, limit: 1000, window: 60}\n")
    tool = home.project / "deploy-tool"
    tool.write_text("#!/bin/sh\nsleep 600\n")  # the shell stays, with the arguments it was given
    tool.chmod(0o755)
    launchers = [
        [str(tool), "--token", GITHUB_TOKEN],  # a tool given its token as an argument
        ["bash", "-c", f"env ANTHROPIC_API_KEY={ANTHROPIC_KEY} sleep 600; true"],  # a launcher setting a key
        [str(tool), "-H", f"Authorization: Bearer {BEARER}"],  # a header with a bearer token
    ]
    with host.session() as session:
        session.wait_ready()
        # The sensor's first poll is its baseline (what runs then is not news): the launchers start after it.
        wait_until(lambda: polled(home, "processes"), what="the processes sensor's first poll")
        procs = [subprocess.Popen(argv, cwd=home.project, env=host.env(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for argv in launchers]
        try:
            # the sensor saw them and the session was told: the started lines reached its requests
            for seen in ("deploy-tool --token", "ANTHROPIC_API_KEY", "deploy-tool -H"):
                host.api.wait_for(seen, session=session.id, timeout=PATIENCE * 2)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait(timeout=PATIENCE)
        for request in host.api.requests:
            body = json.dumps(request.body)
            for secret, piece in SECRETS.items():
                assert secret not in body and piece not in body, request.messages_text[-2000:]
