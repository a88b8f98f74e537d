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
from typing import TYPE_CHECKING

from attend.peers.mailbox import Mailbox, peers_dir

if TYPE_CHECKING:
    from collections.abc import Callable

    from attend.peers.natslink import NatsSettings

__all__ = ["PeersSettings", "open_mailbox", "peers_settings"]


@dataclass(frozen=True, slots=True)
class PeersSettings:
    """The `attend.peers` section: the transport, and for nats how to reach the server."""

    transport: str
    nats: NatsSettings | None = None  # with transport nats


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
    section: dict[str, object] = {**config_default(("peers",)), **config.section("peers")}
    if section["transport"] != "nats":
        return PeersSettings("files")
    from attend.peers.natslink import NatsSettings

    block = section.get("nats")  # checked by its schema, as every value below
    nats: dict[str, object] = {**config_default(("peers", "nats")), **(block if isinstance(block, dict) else {})}
    urls = nats["url"]

    def text(key: str) -> str | None:
        value = nats[key]
        return value if isinstance(value, str) else None

    replicas = nats["replicas"]
    return PeersSettings("nats", NatsSettings(
        urls=tuple(str(u) for u in urls) if isinstance(urls, list) else (str(urls),), creds=text("creds"),
        nkey=text("nkey"), token=text("token"), user=text("user"), password=text("password"),
        tls_ca=text("tls_ca"), tls_cert=text("tls_cert"), tls_key=text("tls_key"),
        presence_ttl=parse_duration(nats["presence_ttl"]), replicas=int(replicas) if isinstance(replicas, (int, float, str)) else 1))


def open_mailbox(env: Mapping[str, str] | None = None, clock: Callable[[], float] | None = None) -> Mailbox:
    """The mailbox of this home's peers folder, over the transport its settings choose."""
    env = os.environ if env is None else env
    settings = peers_settings(env)
    if settings.transport != "nats" or settings.nats is None:  # (transport nats always has its settings)
        return Mailbox(peers_dir(env)) if clock is None else Mailbox(peers_dir(env), clock)
    from attend.peers.natsbox import NatsMailbox

    if clock is None:
        return NatsMailbox(peers_dir(env), settings=settings.nats, env=dict(env))
    return NatsMailbox(peers_dir(env), clock, settings=settings.nats, env=dict(env))
