"""Which transport the peers of this home use, and the mailbox that goes with it (docs/peers.md, "Across machines").

`attend.peers.transport` (user config only: spec/config.py) is `files` (the default: `Mailbox`, this
machine's sessions, no server) or `nats` (`NatsMailbox`, every machine on one NATS server). Everything that
sends, receives or lists peers opens its mailbox here (`open_mailbox`), so the commands, the messages and
peers sensors and `attend run` work the same over either; nothing but peers/natsbox.py and
peers/natslink.py knows NATS is there, and neither is imported with the files transport.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attend.peers.mailbox import Mailbox, peers_dir

__all__ = ["PeersSettings", "open_mailbox", "peers_settings"]


@dataclass(frozen=True, slots=True)
class PeersSettings:
    """The `attend.peers` section: the transport, and for nats how to reach the server."""

    transport: str
    nats: Any = None  # natslink.NatsSettings with transport nats


_cache: dict[tuple[str, int, int], PeersSettings] = {}


def peers_settings(env: Mapping[str, str] | None = None) -> PeersSettings:
    """The `attend.peers` section of the user's config.yaml (read again only when that file changes)."""
    from attend.files import xdg_home

    env = os.environ if env is None else env
    path = xdg_home(env, "XDG_CONFIG_HOME") / "attend" / "config.yaml"
    try:
        info = path.stat()
        stamp = (str(path), info.st_mtime_ns, info.st_size)
    except OSError:
        return PeersSettings("files")
    found = _cache.get(stamp)
    if found is None:
        found = _cache[stamp] = _read(path, env)
    return found


def _read(path: Path, env: Mapping[str, str]) -> PeersSettings:
    from attend.spec.config import config_default, load_config
    from attend.spec.durations import parse_duration
    from attend.spec.folders import layer_paths

    # `peers` is read from the user's file only (load_config ignores it in a project's), so any folder
    # serves as the project here.
    config = load_config(layer_paths(path.parent, env))
    section = {**config_default(("peers",)), **config.section("peers")}
    if section["transport"] != "nats":
        return PeersSettings("files")
    from attend.peers.natslink import NatsSettings

    nats = {**config_default(("peers", "nats")), **section.get("nats", {})}
    urls = nats["url"]
    return PeersSettings("nats", NatsSettings(
        urls=tuple([urls] if isinstance(urls, str) else urls), creds=nats["creds"], nkey=nats["nkey"],
        token=nats["token"], user=nats["user"], password=nats["password"], tls_ca=nats["tls_ca"],
        tls_cert=nats["tls_cert"], tls_key=nats["tls_key"], presence_ttl=parse_duration(nats["presence_ttl"]), replicas=int(nats["replicas"])))


def open_mailbox(env: Mapping[str, str] | None = None, clock: Any = None) -> Mailbox:
    """The mailbox of this home's peers folder, over the transport its settings choose."""
    env = os.environ if env is None else env
    settings = peers_settings(env)
    extra = {} if clock is None else {"clock": clock}
    if settings.transport != "nats":
        return Mailbox(peers_dir(env), **extra)
    from attend.peers.natsbox import NatsMailbox

    return NatsMailbox(peers_dir(env), settings=settings.nats, env=dict(env), **extra)
