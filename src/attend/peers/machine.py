"""Which machine this is, and a project's name that is the same on every machine (docs/peers.md, "Across machines").

Decisions implemented here:

- A machine is an XDG home: its id is `$XDG_STATE_HOME/attend/machine-id`, written at the first use as
  `<host name>-<8 hex digits>` (the host name folded to `[a-z0-9-]`, so it can stand in a NATS consumer
  name). Two homes on one host are two machines; one home copied to another host keeps its id (delete
  the file to draw a new one).
- A project's identity is its git remote (`remote.origin.url`, else the first remote) normalised to
  `host/path` (scheme, user, password or token, port and `.git` left out, so an ssh and an https clone
  of one repository agree), followed by `//` and the folder's path within the repository when it is not
  the repository's top: `github.com/ada/api`, `github.com/ada/mono//services/api`. A folder without a
  git remote is `<machine id>:<resolved path>`, which only this machine has.
- Both are read once per process and folder (a project's remote does not change under a running
  session; a new remote is read by the next process).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
from collections.abc import Mapping
from pathlib import Path

from attend.children import ChildTimeout, run
from attend.files import state_folder, write_atomically

__all__ = ["identity_hash", "machine_id", "normalise_remote", "project_identity"]

#: What a machine id looks like (the file is read as untrusted: anything else is drawn again).
MACHINE_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}\Z")
#: How long `git` may take to say a folder's remote (seconds).
GIT_TIMEOUT = 5.0

_identities: dict[tuple[str, str], str] = {}


def machine_id(env: Mapping[str, str] | None = None) -> str:
    """This home's machine id, drawn and written at the first use."""
    env = os.environ if env is None else env
    path = state_folder(env) / "machine-id"
    try:
        found = path.read_text(encoding="utf-8").strip()
        if MACHINE_ID_RE.fullmatch(found):
            return found
    except (OSError, ValueError):
        pass
    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")[:40] or "host"
    drawn = f"{host}-{secrets.token_hex(4)}"
    try:
        write_atomically(path, drawn + "\n", exclusive=True)
    except FileExistsError:
        return machine_id(env)  # another process drew one first: that one is this machine's
    return drawn


def normalise_remote(url: str) -> str:
    """A git remote URL as `host/path`: no scheme, user, password or token, port, trailing `/` or `.git`."""
    text = url.strip()
    if "://" in text:
        rest = text.split("://", 1)[1]
        host, _, path = rest.partition("/")
    elif re.match(r"[^/:]+:", text) and not re.match(r"[A-Za-z]:[\\/]", text):  # scp form: user@host:path
        host, _, path = text.partition(":")
    else:
        return text.rstrip("/").removesuffix(".git")  # a local path: as it is
    host = host.rsplit("@", 1)[-1].split(":", 1)[0].lower()
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host}/{path}" if path else host


def _git(args: list[str], folder: str, env: Mapping[str, str]) -> str | None:
    """`git -C FOLDER ARGS`'s stdout, stripped (`attend.children.run`, in `env`); None when git fails, is
    missing or runs past `GIT_TIMEOUT`."""
    try:
        done = run(["git", "-C", folder, *args], env=env, timeout=GIT_TIMEOUT)
    except (OSError, ValueError, ChildTimeout):
        return None
    return done.out_text.strip() if done.returncode == 0 else None


def project_identity(project_dir: Path | str, env: Mapping[str, str] | None = None) -> str:
    """The name `project_dir` has on every machine (the module docstring says how it is made)."""
    env = os.environ if env is None else env
    folder = str(Path(project_dir).resolve())
    machine = machine_id(env)
    cached = _identities.get((machine, folder))
    if cached is not None:
        return cached
    identity = f"{machine}:{folder}"
    remotes = (_git(["remote"], folder, env) or "").split()
    if remotes:
        remote = "origin" if "origin" in remotes else remotes[0]
        url = _git(["config", "--get", f"remote.{remote}.url"], folder, env)
        if url:
            identity = normalise_remote(url)
            prefix = (_git(["rev-parse", "--show-prefix"], folder, env) or "").strip("/")
            if prefix:
                identity = f"{identity}//{prefix}"
    _identities[(machine, folder)] = identity
    return identity


def identity_hash(identity: str) -> str:
    """16 hex digits naming a project identity (its NATS subject, its tray folder)."""
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]
