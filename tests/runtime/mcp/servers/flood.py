"""A server that floods its client (issue 35, item 4): `items://list` (the items as JSON text) on a handshake-era
revision with `resources/subscribe`; once a client subscribes, a flood of `notifications/resources/updated`
for the resource, each followed by a log message (`notifications/message`), as fast as it can write them.

The test starts the flood: the server waits to read a count N from the FIFO `ATTEND_TEST_FLOOD` (so the test
can measure from a quiet start), sends N updates and N log messages, then a `ping` request, whose answer
comes once the client has read everything before it, and one more update (a read after it sees the whole
flood). It then writes `ATTEND_TEST_FLOOD` + `.done`: JSON `{"sent", "cpu", "wall"}`, the notifications of the
flood and this process's CPU and wall seconds from the first to the answer. `ATTEND_TEST_READS` gets a line
`read <time>` for each `resources/read` and `subscribe <time>` for each subscription.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from common import listing_text, record_start
from wire import WireServer

URI = "items://list"
server: WireServer


def record(what: str) -> None:
    reads = os.environ.get("ATTEND_TEST_READS")
    if reads:
        with open(reads, "a", encoding="utf-8") as handle:
            handle.write(f"{what} {time.time()}\n")


def read(params: dict[str, Any]) -> dict[str, Any]:
    record("read")
    return {"contents": [{"uri": params.get("uri", URI), "mimeType": "application/json", "text": listing_text()}]}


_flooding = threading.Lock()


def subscribe(params: dict[str, Any]) -> dict[str, Any]:
    record("subscribe")
    if _flooding.acquire(blocking=False):  # one flood per process, whoever subscribes first
        threading.Thread(target=flood, args=(params.get("uri", URI),), daemon=True).start()
    return {}


def flood(uri: str) -> None:
    fifo = os.environ["ATTEND_TEST_FLOOD"]
    with open(fifo, encoding="utf-8") as handle:  # blocks until the test opens it and says how many
        count = int(handle.readline())
    cpu, wall = time.process_time(), time.monotonic()
    for n in range(count):
        server.notify("notifications/resources/updated", {"uri": uri})
        server.notify("notifications/message", {"level": "info", "logger": "flood", "data": f"update {n} sent"})
    server.request("ping")
    done = {"sent": 2 * count, "cpu": time.process_time() - cpu, "wall": time.monotonic() - wall}
    server.notify("notifications/resources/updated", {"uri": uri})
    with open(f"{fifo}.done.tmp", "w", encoding="utf-8") as handle:
        json.dump(done, handle)
    os.replace(f"{fifo}.done.tmp", f"{fifo}.done")


if __name__ == "__main__":
    record_start("flood")
    server = WireServer("flood", {}, legacy=True,
                        capabilities={"resources": {"subscribe": True}, "logging": {}},
                        methods={"resources/read": read, "resources/subscribe": subscribe, "ping": lambda _: {},
                                 "logging/setLevel": lambda _: {}})
    server.run()
