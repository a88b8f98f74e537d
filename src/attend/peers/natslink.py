"""The one place attend talks to NATS: an asyncio loop in its own thread, reached by blocking calls (docs/peers.md, "Across machines").

nats-py is asyncio and attend's runtime is trio. The bridge is a thread running one asyncio loop per process
and settings (`link(settings)`); every other module calls `Link`'s plain methods, which hand a coroutine
to that loop (`asyncio.run_coroutine_threadsafe`) and wait for its result with a timeout. A trio task never
awaits asyncio: the calls that may wait on the network (`publish`, `entries`, `update`, `drain`) are made
from a sensor's poll thread, a one-shot command or a trio worker thread (serve.py's spool flush), and the
heartbeat's `put` does not wait at all (it hands its write to the loop and returns). The mirror and the
presence watch (below) run on the loop itself, so a running session costs the thread one long-polled fetch
and one watch. Chosen over trio-asyncio: no second event loop
inside trio's, nothing asyncio leaks into trio code, and the lint path and the files transport import
none of it (this module imports nats only inside the thread's first call). `python -m benchmarks
bench_nats` measures one round trip across the bridge.

Layout on the server (constants below; the limits are stated in docs/peers.md):

- stream `ATTEND_PEERS` (file storage) on `attend.peers.>`: `attend.peers.p.<hash>` a project's tray
  (the hash of its identity, peers/machine.py), `attend.peers.open` the open channel,
  `attend.peers.c.<channel>` a channel. Each message is the JSON a message file holds, published with
  `Nats-Msg-Id: <message id>`, so a send retried within `DUPLICATE_WINDOW` is stored once.
- consumers `m-<machine>-<hash>`: one durable pull consumer per machine and project, on the project's
  tray, the open channel and every channel, explicit acks. A message is acked only once it is in this
  machine's peers folder (what one fetch brought written whole and fsynced, a batch file per folder, before
  any of it is acked: natsbox.py `_hand_over`), from where the messages sensor, the journal and each
  session's delivery position take it (the files transport's path, unchanged); a crash in between
  delivers it again after `ACK_WAIT`, and the id already stored there drops the repeat.
- key-value bucket `attend-peers-presence` (TTL `presence_ttl`): one key per live session, rewritten at every
  heartbeat; a machine that dies stops rewriting, and its sessions leave within the TTL. A running session
  watches it (`watch`): a key that comes or goes wakes this machine's peers sensor.
- key-value bucket `attend-peers-channels`: one key per channel, its members.

Failures: `peers.mailbox.Unavailable(state, words)`, `state` `unavailable` (no server reached: the connection's own
words, `Connect call failed ('127.0.0.1', 4222)`) or `auth_failed` (the server's: `Authorization
Violation`). Never a prompt, never a credential in the words.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from attend.bounds import MAX_PEER_MESSAGE_BYTES
from attend.peers.mailbox import Unavailable

if TYPE_CHECKING:
    from typing import Protocol

    from nats.aio.client import Client
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription
    from nats.js import JetStreamContext
    from nats.js.kv import KeyValue

    class KeyWatcher(Protocol):
        """nats-py's KeyValue.KeyWatcher, whose methods it leaves unannotated."""

        async def updates(self, timeout: float | None = 5.0) -> KeyValue.Entry | None: ...

        async def stop(self) -> None: ...

__all__ = ["ACK_WAIT", "CALL_TIMEOUT", "NatsSettings", "STREAM", "Unavailable", "link"]

T = TypeVar("T")

#: The stream of peer messages.
STREAM = "ATTEND_PEERS"
#: Its subjects.
SUBJECT_PREFIX = "attend.peers"
#: How long a message is kept (seconds): read or not, it goes after a week.
MAX_AGE = 7 * 24 * 3600.0
#: The most the stream holds (bytes); the oldest messages go first past it.
MAX_BYTES = 1 << 30
#: A retried publish with the same message id within this is stored once (seconds): a spooled send
#: retried after longer is stored twice and dropped by the receiving folder.
DUPLICATE_WINDOW = 600.0
#: The presence bucket (one key per live session) and the channels bucket (one key per channel).
PRESENCE_BUCKET = "attend-peers-presence"
CHANNELS_BUCKET = "attend-peers-channels"
#: A message not acked this long after delivery is delivered again (seconds).
ACK_WAIT = 10.0
#: How long a blocking call waits for the loop (seconds): past it the server is `unavailable`.
CALL_TIMEOUT = 5.0
#: How long a one-shot command's drain of what waits for it may take (seconds; 10,000 messages take about one).
DRAIN_TIMEOUT = 60.0
#: How long a connection attempt may take (seconds).
CONNECT_TIMEOUT = 2.0
#: How many messages one fetch of the mirror takes, and how long it long-polls (seconds).
FETCH_BATCH = 1024
FETCH_WAIT = 2.0
#: Between two connection attempts once the server was lost (seconds).
RECONNECT_WAIT = 0.5


@dataclass(frozen=True, slots=True)
class NatsSettings:
    """How to reach the server (`attend.peers.nats.*`, peers/transport.py reads them); secrets expanded."""

    urls: tuple[str, ...]
    creds: str | None = None
    nkey: str | None = None
    token: str | None = None
    user: str | None = None
    password: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    presence_ttl: float = 30.0
    replicas: int = 1

    def __repr__(self) -> str:  # never a secret in a traceback or a log
        return f"NatsSettings(urls={self.urls!r})"


def _words(exc: BaseException | None) -> str:
    """What an error says, without nats-py's `nats: ` prefix and quotes."""
    if exc is None:
        return "no server answered"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror and not text.startswith("Connect call failed"):
        text = exc.strerror
    text = text.removeprefix("nats: ").strip().strip("'")
    return text


def _state_of(words: str) -> str:
    lowered = words.lower()
    return "auth_failed" if "authorization" in lowered or "authentication" in lowered or "auth" in lowered.split() \
        else "unavailable"


class LinkCheck(TypedDict):
    """What `Link.check` read from the server (`attend doctor` shows it)."""

    server: str
    stream: str
    messages: int
    bytes: int
    streams: int
    consumers: int


class Link:
    """One connection to the server and the loop it lives on (see the module docstring)."""

    def __init__(self, settings: NatsSettings) -> None:
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run_loop, name="attend-nats", daemon=True)
        self.thread.start()
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        self._kv: dict[str, KeyValue] = {}
        self._connecting: asyncio.Lock | None = None
        self._last_error: BaseException | None = None
        self._retry_at = 0.0
        self._lost_at = 0.0
        self._mirrors: dict[str, tuple[asyncio.Task[None], tuple[object, ...]]] = {}
        self._watches: dict[str, tuple[asyncio.Task[None], Callable[[], None]]] = {}
        #: The last failure, or None while the connection works (what the sensors report).
        self.failure: Unavailable | None = None

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    # -- the bridge --------------------------------------------------------------------------------

    def submit(self, make: Callable[[], Coroutine[Any, Any, T]]) -> Future[T]:
        """Run `make()` on the loop; its future (nothing waits for it)."""
        async def guarded() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(guarded(), self.loop)

    def call(self, make: Callable[[], Coroutine[Any, Any, T]], timeout: float = CALL_TIMEOUT) -> T:
        """Run `make()` on the loop and wait for its result.

        Raises:
            Unavailable: the server could not be reached or refused us (or did not answer in `timeout`).
        """
        future = self.submit(make)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise self._failed(TimeoutError(f"the server did not answer within {timeout:g} s")) from None
        except Unavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - nats-py's errors are many; each is a failure with its words
            raise self._failed(exc) from None

    def _failed(self, exc: BaseException) -> Unavailable:
        words = _words(self._last_error if isinstance(exc, TimeoutError) and self._last_error else exc)
        if not isinstance(exc, Unavailable):
            exc = Unavailable(_state_of(words), words)
        self.failure = exc
        return exc

    # -- the connection ----------------------------------------------------------------------------

    async def _error(self, exc: BaseException) -> None:
        self._last_error = exc

    async def _disconnected(self) -> None:
        self._lost_at = self.loop.time()
        self.failure = Unavailable("unavailable", _words(self._last_error) if self._last_error else
                                   "the connection to the server was lost")

    async def _reconnected(self) -> None:
        # The mirrors go on by themselves: a fetch asked before the loss ends within `FETCH_WAIT`, and none is
        # asked while the connection is down. (Cancelling one instead left its request, which nats-py sends
        # once reconnected, to take a message for nobody: it came again only after `ACK_WAIT`.)
        self.failure = None
        # A watch is the server's push to a subscription: made again, it lists the keys there now.
        for bucket, (task, on_change) in list(self._watches.items()):
            task.cancel()
            self._watches[bucket] = (self.loop.create_task(self._watch(bucket, on_change)), on_change)

    def _options(self) -> dict[str, Any]:
        from attend.spec.headers import VAR_REFERENCE

        s = self.settings

        def expanded(value: str | None) -> str | None:
            if value is None:
                return None
            return VAR_REFERENCE.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)

        options: dict[str, Any] = {
            "servers": list(s.urls), "name": "attend", "connect_timeout": CONNECT_TIMEOUT,
            "allow_reconnect": True, "max_reconnect_attempts": -1, "reconnect_time_wait": RECONNECT_WAIT,
            "error_cb": self._error, "disconnected_cb": self._disconnected, "reconnected_cb": self._reconnected,
        }
        if s.creds or s.nkey:
            import importlib.util

            if importlib.util.find_spec("nkeys") is None:
                raise Unavailable("unavailable", "attend.peers.nats.creds and nkey sign with the nkeys package, which "
                                  "is not installed: pip install 'attend[nkeys]'")
        if s.creds:
            options["user_credentials"] = os.path.expanduser(s.creds)
        if s.nkey:
            options["nkeys_seed"] = os.path.expanduser(s.nkey)
        if s.token:
            options["token"] = expanded(s.token)
        if s.user:
            options["user"] = expanded(s.user)
            options["password"] = expanded(s.password) or ""
        if s.tls_ca or s.tls_cert:
            import ssl

            context = ssl.create_default_context(cafile=os.path.expanduser(s.tls_ca) if s.tls_ca else None)
            if s.tls_cert:
                context.load_cert_chain(os.path.expanduser(s.tls_cert),
                                        os.path.expanduser(s.tls_key) if s.tls_key else None)
            options["tls"] = context
        return options

    async def _connect(self) -> JetStreamContext:
        """The JetStream context, connecting first when needed (the stream made when missing)."""
        if self._js is not None and self._nc is not None and self._nc.is_connected:  # set together
            return self._js
        if self._nc is not None and not self._nc.is_closed:
            # Lost and being found again (nats-py reconnects by itself): a loss just now may be a restart, so it
            # is waited for a little; one that lasts answers at once (a send spools, a sensor says unavailable).
            deadline = self._lost_at + CONNECT_TIMEOUT
            while not self._nc.is_connected and self.loop.time() < deadline:
                await asyncio.sleep(0.05)
            if self._js is not None and self._nc.is_connected:
                return self._js
            raise Unavailable("unavailable", _words(self._last_error) if self._last_error else
                              "the connection to the server was lost")
        if self.failure is not None and self.loop.time() < self._retry_at:
            raise self.failure  # a connection just failed: the next attempt waits a little
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._js is not None and self._nc is not None and self._nc.is_connected:
                return self._js
            self._retry_at = self.loop.time() + RECONNECT_WAIT
            import nats
            from nats.js import api

            self._last_error = None
            try:
                # The first connection tries each server once (and a wrong credential is said at once); a lost
                # one is then sought again without end (a `max_reconnect_attempts` of -1 would make the first
                # attempt loop too).
                nc = await nats.connect(**{**self._options(), "allow_reconnect": False, "max_reconnect_attempts": 1})
            except Exception as exc:  # noqa: BLE001
                self._nc = None
                raise self._failed(self._last_error or exc) from None
            # Reconnect from here on: a lost server is waited for (the mirror resumes from its consumer).
            nc.options["allow_reconnect"] = True
            nc.options["max_reconnect_attempts"] = -1
            js = nc.jetstream(timeout=CALL_TIMEOUT)
            config = api.StreamConfig(
                name=STREAM, subjects=[f"{SUBJECT_PREFIX}.>"], storage=api.StorageType.FILE, max_age=MAX_AGE,
                max_bytes=MAX_BYTES, max_msg_size=MAX_PEER_MESSAGE_BYTES, duplicate_window=DUPLICATE_WINDOW,
                discard=api.DiscardPolicy.OLD, num_replicas=self.settings.replicas)
            try:
                try:
                    await js.stream_info(STREAM)
                except Exception:  # noqa: BLE001 - not found: made here
                    await js.add_stream(config)
            except Exception as exc:
                await nc.close()
                raise self._failed(exc) from None
            self._nc, self._js, self._kv = nc, js, {}
            self.failure = None
            return js

    async def _bucket(self, name: str) -> KeyValue:
        js = await self._connect()
        if name not in self._kv:
            from nats.js import api

            try:
                self._kv[name] = await js.key_value(name)
            except Exception:  # noqa: BLE001 - not there yet: made here
                ttl = self.settings.presence_ttl if name == PRESENCE_BUCKET else None
                self._kv[name] = await js.create_key_value(api.KeyValueConfig(
                    bucket=name, history=1, ttl=ttl, storage=api.StorageType.FILE, replicas=self.settings.replicas))
        return self._kv[name]

    # -- what the peers use ------------------------------------------------------------------------

    def check(self) -> LinkCheck:
        """Connect and read the account and stream (what `attend doctor` shows)."""
        async def go() -> LinkCheck:
            js = await self._connect()
            account = await js.account_info()
            info = await js.stream_info(STREAM)
            url = self._nc.connected_url if self._nc is not None else None
            return {"server": f"{url.hostname}:{url.port}" if url else "", "stream": STREAM,
                    "messages": info.state.messages, "bytes": info.state.bytes,
                    "streams": account.streams, "consumers": account.consumers}
        return self.call(go)

    def publish(self, subject: str, payload: bytes, msg_id: str, timeout: float = CALL_TIMEOUT) -> int:
        """Publish one message (stored once per `msg_id`); its stream sequence."""
        async def go() -> int:
            js = await self._connect()
            ack = await js.publish(subject, payload, stream=STREAM, headers={"Nats-Msg-Id": msg_id})
            return int(ack.seq)
        return self.call(go, timeout)

    def put(self, bucket: str, key: str, value: bytes) -> Future[int]:
        """Write `key` in `bucket` without waiting (the heartbeat's write)."""
        async def go() -> int:
            kv = await self._bucket(bucket)
            return int(await kv.put(key, value))
        return self.submit(go)

    def delete(self, bucket: str, key: str, timeout: float = CALL_TIMEOUT) -> None:
        """Remove `key` from `bucket`."""
        async def go() -> None:
            kv = await self._bucket(bucket)
            await kv.purge(key)
        self.call(go, timeout)

    def entries(self, bucket: str) -> dict[str, bytes]:
        """Every key of `bucket` and its value.

        The bucket's stream lists its keys (its subjects), and each key's newest value is got directly, all at
        once. Not nats-py's `watchall`: its marker for the end of the current keys came first now and then (when
        the server had delivered them before the watcher asked how many were pending), so `peers list` or
        `channels` was empty; and each watch left a consumer on the server for 5 minutes, so a busy server
        refused new ones (`maximum consumers limit reached`) after about a thousand lists.
        """
        async def go() -> dict[str, bytes]:
            from nats.js.errors import KeyNotFoundError

            kv = await self._bucket(bucket)
            js = await self._connect()
            prefix = f"$KV.{bucket}."
            info = await js.stream_info(f"KV_{bucket}", subjects_filter=f"{prefix}>")

            async def value(key: str) -> bytes | None:
                try:
                    found: bytes | None = (await kv.get(key)).value
                    return found
                except KeyNotFoundError:  # removed (or gone past the TTL) since the listing
                    return None
            keys = [subject[len(prefix):] for subject in info.state.subjects or {}]
            values = await asyncio.gather(*(value(key) for key in keys))
            return {key: found for key, found in zip(keys, values, strict=True) if found is not None}
        return self.call(go)

    def update(self, bucket: str, key: str, change: Callable[[bytes | None], bytes | None]) -> None:
        """Replace `key`'s value by `change(old)` (None: remove it), retried while another writer wins."""
        async def go() -> None:
            from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

            kv = await self._bucket(bucket)
            for _ in range(20):
                try:
                    entry = await kv.get(key)
                    old, revision = entry.value, entry.revision
                except KeyNotFoundError:
                    old, revision = None, 0
                new = change(old)
                try:
                    if new is None:
                        if old is not None:
                            await kv.delete(key, last=revision)
                    elif revision:
                        await kv.update(key, new, last=revision)
                    else:
                        await kv.create(key, new)
                    return
                except (KeyWrongLastSequenceError, Exception) as exc:  # noqa: BLE001 - a lost race: again
                    if "wrong last sequence" not in str(exc).lower() and not isinstance(exc, KeyWrongLastSequenceError):
                        raise
            raise Unavailable("unavailable", f"{key} kept changing under 20 attempts to update it")
        self.call(go)

    # -- the mirror --------------------------------------------------------------------------------

    def mirror(self, consumer: str, subjects: list[str], hand_over: Callable[[list[bytes]], set[int]],
               before_ack: Callable[[], None] | None = None) -> None:
        """Keep moving what `consumer` delivers into this machine through `hand_over` (the payloads of one fetch,
        made durable when it returns; it answers the indexes of those that are no message), acking them only
        after it returned; runs on the loop until `stop_mirror` (reconnecting as needed).

        `hand_over` raising OSError leaves the batch unacked (delivered again); a payload it refuses is
        terminated: it can never be handed over.
        """
        def start() -> None:
            if consumer not in self._mirrors or self._mirrors[consumer][0].done():
                args = (consumer, subjects, hand_over, before_ack)
                self._mirrors[consumer] = (self.loop.create_task(self._mirror(*args)), args)
        self.loop.call_soon_threadsafe(start)

    def drain(self, consumer: str, subjects: list[str], hand_over: Callable[[list[bytes]], set[int]],
              timeout: float = DRAIN_TIMEOUT) -> int:
        """Move what `consumer` holds now into this machine (a one-shot command's mirror); how many came."""
        async def go() -> int:
            sub = await self._subscribe(consumer, subjects)
            moved = 0
            try:
                while True:
                    batch = await self._fetch(sub, 0.2)
                    if not batch:
                        return moved
                    moved += await self._hand_over(batch, hand_over, None)
            finally:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()
        return self.call(go, timeout)

    def watch(self, bucket: str, on_change: Callable[[], None]) -> None:
        """Call `on_change()` whenever a key of `bucket` comes or goes (not at each rewrite of one), until
        `stop_watch`; a lost server is waited for and the watch made again."""
        def start() -> None:
            if bucket not in self._watches or self._watches[bucket][0].done():
                self._watches[bucket] = (self.loop.create_task(self._watch(bucket, on_change)), on_change)
        self.loop.call_soon_threadsafe(start)

    def stop_watch(self, bucket: str) -> None:
        def stop() -> None:
            found = self._watches.pop(bucket, None)
            if found is not None:
                found[0].cancel()
        self.loop.call_soon_threadsafe(stop)

    async def _watch(self, bucket: str, on_change: Callable[[], None]) -> None:
        # Every key new to this watch, or gone, is a change (the keys there when it starts too: one wake more at
        # start, but nats-py marks the end of the current keys only after the first one of an empty bucket).
        known: set[str] = set()
        while True:
            watcher: KeyWatcher | None = None
            try:
                kv = await self._bucket(bucket)
                watching: KeyWatcher = await kv.watchall()
                watcher = watching
                while True:
                    entry = await watching.updates(timeout=None)
                    if entry is None:
                        continue
                    if entry.operation in ("DEL", "PURGE") or entry.value is None:
                        if entry.key in known:
                            known.discard(entry.key)
                            on_change()
                    elif entry.key not in known:
                        known.add(entry.key)
                        on_change()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the server went away: watch again once it is back
                await asyncio.sleep(RECONNECT_WAIT)
            finally:
                if watcher is not None:
                    with contextlib.suppress(Exception):
                        await watcher.stop()

    def mirroring(self, consumer: str) -> bool:
        """Whether this process mirrors `consumer` now."""
        found = self._mirrors.get(consumer)
        return found is not None and not found[0].done()

    def stop_mirror(self, consumer: str) -> None:
        def stop() -> None:
            found = self._mirrors.pop(consumer, None)
            if found is not None:
                found[0].cancel()
        self.loop.call_soon_threadsafe(stop)

    async def _subscribe(self, consumer: str, subjects: list[str]) -> _Pull:
        from nats.js import api

        js = await self._connect()
        config = api.ConsumerConfig(
            durable_name=consumer, deliver_policy=api.DeliverPolicy.ALL, ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=ACK_WAIT, filter_subjects=subjects, max_ack_pending=4 * FETCH_BATCH,
            inactive_threshold=MAX_AGE)
        await js.add_consumer(STREAM, config)
        assert self._nc is not None  # _connect made it
        pull = _Pull(self._nc, f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.{consumer}")
        await pull.start()
        return pull

    @staticmethod
    async def _fetch(sub: _Pull, wait: float) -> list[Msg]:
        return await sub.fetch(FETCH_BATCH, wait)

    async def _hand_over(self, batch: list[Msg], hand_over: Callable[[list[bytes]], set[int]],
                         before_ack: Callable[[], None] | None) -> int:
        try:
            refused = hand_over([msg.data for msg in batch])
        except OSError:
            for msg in batch:
                await msg.nak(delay=ACK_WAIT)  # this machine cannot store them now: again later
            return 0
        handed = [msg for n, msg in enumerate(batch) if n not in refused]
        for n in refused:
            await batch[n].term()  # never a message: nobody can ever be handed it
        if handed and before_ack is not None:
            before_ack()
        for msg in handed:
            await msg.ack()
        return len(handed)

    async def _mirror(self, consumer: str, subjects: list[str], hand_over: Callable[[list[bytes]], set[int]],
                      before_ack: Callable[[], None] | None) -> None:
        # The subscription is kept across a lost connection (nats-py makes it again on the server once back):
        # a message the server hands to a pull request made before the loss then still reaches the next fetch,
        # which takes what the subscription holds first. It is made anew only on a new connection.
        sub, sub_nc = None, None
        while True:
            try:
                if self._nc is not None and not self._nc.is_connected and not self._nc.is_closed:
                    # Lost: a pull request made now would wait in nats-py's buffer and reach the server once
                    # it is back, where it takes messages for a fetch that has long given up.
                    await asyncio.sleep(RECONNECT_WAIT / 5)
                    continue
                if sub is None or sub_nc is not self._nc:
                    sub = await self._subscribe(consumer, subjects)
                    sub_nc = self._nc
                batch = await self._fetch(sub, FETCH_WAIT)
                if batch:
                    await self._hand_over(batch, hand_over, before_ack)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the server went away: wait for it, then resume from the consumer
                if not isinstance(exc, Unavailable) and (self._nc is None or not self._nc.is_connected):
                    self.failure = Unavailable(_state_of(_words(exc)), _words(exc))
                elif self._nc is not None and self._nc.is_connected and sub is not None:
                    # Connected, yet the fetch failed (its consumer gone, say): made again, consumer too.
                    with contextlib.suppress(Exception):
                        await sub.unsubscribe()
                    sub = None
                await asyncio.sleep(RECONNECT_WAIT)

    def close(self) -> None:
        """Close the connection and stop the loop's thread."""
        async def go() -> None:
            for task, _ in self._mirrors.values():
                task.cancel()
            if self._nc is not None:
                with contextlib.suppress(Exception):
                    await self._nc.close()
        with contextlib.suppress(Exception):
            self.submit(go).result(CALL_TIMEOUT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(CALL_TIMEOUT)


class _Pull:
    """A pull consumer read through a subscription with a callback, with nats-py's public calls.

    nats-py's own `fetch` awaits each message as a task of its own (a uuid, a task and a timeout apiece), which
    cost more than storing the message: a backlog's 10,000 took some 0.5 s of the loop's thread for that alone.
    Here the subscription's callback appends each message to `got`, and a fetch asks the server for a batch
    (`$JS.API.CONSUMER.MSG.NEXT`, as nats-py does) and takes what came. A message is never dropped: one the
    server hands to an earlier request (one that gave up, or one made before a lost connection) lands in `got`
    all the same, and the next fetch takes it.
    """

    def __init__(self, nc: Client, next_subject: str) -> None:
        self.nc = nc
        self.next_subject = next_subject
        self.inbox = nc.new_inbox()
        self.got: list[Msg] = []
        self.sub: Subscription | None = None
        self._news = asyncio.Event()
        self._ended = False  # a request's end came (its batch's last message, or a status saying it is over)
        self._want = 0
        self._failure: str | None = None

    async def start(self) -> None:
        self.sub = await self.nc.subscribe(self.inbox, cb=self._on_message)

    async def _on_message(self, msg: Msg) -> None:
        headers = msg.headers or {}
        status = headers.get("Status")
        if not status:
            self.got.append(msg)
            if len(self.got) >= self._want:
                self._ended = True
        elif status == "100":
            return  # an idle heartbeat or flow control: nothing ended
        elif status in ("404", "408") or (status == "409" and "deleted" not in headers.get("Description", "").lower()):
            self._ended = True  # no messages now, the request expired, or the server ended it: none is lost
        else:
            self._failure = f"{status} {headers.get('Description', '')}".strip()  # the consumer is gone
            self._ended = True
        self._news.set()

    async def _request(self, batch: int, wait: float | None) -> None:
        self._want, self._ended = len(self.got) + batch, False
        self._news.clear()
        ask: dict[str, int | bool] = {"batch": batch}
        if wait is None:
            ask["no_wait"] = True
        else:
            ask["expires"] = int(wait * 1e9)
        await self.nc.publish(self.next_subject, json.dumps(ask).encode(), reply=self.inbox)

    async def fetch(self, batch: int, wait: float) -> list[Msg]:
        """What the consumer holds now, up to `batch` messages; with nothing there, what comes within `wait`
        seconds (returned as soon as something does: a live message is not held back for a fuller batch).

        Raises:
            RuntimeError: the server says the consumer cannot be read (gone): made again by the caller.
        """
        if not self.got:
            await self._request(batch, None)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CALL_TIMEOUT):
                    while not self._ended:
                        await self._news.wait()
                        self._news.clear()
        if not self.got and self._failure is None:
            await self._request(batch, wait)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait + 1.0):
                    while not self.got and not self._ended:
                        await self._news.wait()
                        self._news.clear()
        if self._failure is not None and not self.got:
            failure, self._failure = self._failure, None
            raise RuntimeError(failure)
        got, self.got = self.got, []
        return got

    async def unsubscribe(self) -> None:
        if self.sub is not None:
            await self.sub.unsubscribe()


_links: dict[NatsSettings, Link] = {}
_links_lock = threading.Lock()


def link(settings: NatsSettings) -> Link:
    """This process's link for `settings` (one per settings, made at the first call)."""
    with _links_lock:
        found = _links.get(settings)
        if found is None:
            found = _links[settings] = Link(settings)
        return found


def payload(data: dict[str, Any]) -> bytes:
    """A message as the stream holds it: the JSON its file holds."""
    return json.dumps(data, ensure_ascii=False).encode("utf-8")
