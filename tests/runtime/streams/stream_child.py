"""A real long-running child for streaming command sensors, misbehaving on purpose.

    stream_child.py follow FILE [--after=SEQ]   print each JSON line appended to FILE (from its start), as
                                                journalctl -f does; a record with seq <= SEQ is skipped (the
                                                cursor); the line CRASH ends the process with exit code 3
                                                (a line on stderr first), once per CRASH line (FILE.crashed
                                                counts the crashes seen; FILE.printed logs each seq
                                                just before printing it, across restarts)
    stream_child.py flood N [FILE]              print N JSON lines as fast as it can, then the line
                                                {"seq": "done"}; then hang (FILE gets "flooded" once done)
    stream_child.py big SIZE SHAPE COUNT FILE [PAUSE]
                                                print COUNT lines of SIZE bytes each (0: forever) as fast as
                                                the pipe takes them (or PAUSE seconds apart; forever: FILE
                                                says "flooding" after the first 4 MiB), then the line
                                                {"seq": "last", "last": true},
                                                write "done" to FILE and hang; SHAPE is text ({"seq": N, "pad":
                                                "xx..."}), dense ({"seq": N, "v": [{},{},...]}, the most objects
                                                a byte of JSON makes) or none (no newline ever: COUNT reads of
                                                64 KiB of one endless line, no last line)
    stream_child.py hang                        ignore SIGTERM and print nothing, forever
    stream_child.py spawn FILE                  start `hang` as a child of its own (a pipeline's member, say),
                                                write its pid to FILE, then hang too
"""

import json
import signal
import sys
import time
from pathlib import Path


def follow(path: Path, after: int | None) -> None:
    crashed_file = Path(str(path) + ".crashed")
    crashes_seen = int(crashed_file.read_text()) if crashed_file.exists() else 0
    crash_lines = 0
    printed = Path(str(path) + ".printed")
    offset = 0
    while True:
        text = path.read_text() if path.exists() else ""
        if len(text) > offset and "\n" in text[offset:]:
            end = text.rindex("\n") + 1
            for line in text[offset:end].splitlines():
                if line == "CRASH":
                    crash_lines += 1
                    if crash_lines > crashes_seen:
                        crashed_file.write_text(str(crash_lines))
                        print("crashing on purpose", file=sys.stderr, flush=True)
                        sys.exit(3)
                    continue
                record = json.loads(line)
                if after is not None and isinstance(record.get("seq"), int) and record["seq"] <= after:
                    continue
                # Logged before it is printed: the daemon may act on the record and die at once, and its
                # death signal ends this child right after the print (the log would miss what the daemon read).
                with printed.open("a") as log:
                    log.write(f"{record.get('seq')}\n")
                print(json.dumps(record), flush=True)
            offset = end
        time.sleep(0.02)


def big(size: int, shape: str, count: int, done: Path, pause: float) -> None:
    out = sys.stdout.buffer
    n = 0
    while count == 0 or n < count:
        n += 1
        if shape == "none":
            out.write(b"x" * 65536)
            continue
        head = b'{"seq": %d, ' % n
        if shape == "dense":
            body = b'"v": [' + b"{}," * ((size - len(head) - 10) // 3) + b'{}]}\n'
        else:
            body = b'"pad": "' + b"x" * (size - len(head) - 12) + b'"}\n'
        out.write(head + body)
        out.flush()
        if count == 0 and n * size >= 4 << 20 > (n - 1) * size:
            done.write_text("flooding")  # forever: the daemon has read the first 4 MiB
        time.sleep(pause)
    if shape != "none":
        out.write(b'{"seq": "last", "last": true}\n')
    out.flush()
    done.write_text("done")
    while True:
        time.sleep(3600)


def main() -> None:
    mode = sys.argv[1]
    if mode == "follow":
        after = None
        for arg in sys.argv[3:]:
            if arg.startswith("--after="):
                after = int(arg.split("=", 1)[1])
        follow(Path(sys.argv[2]), after)
    elif mode == "flood":
        count = int(sys.argv[2])
        out = sys.stdout
        for n in range(count):
            out.write(json.dumps({"seq": n, "level": "info", "pad": "x" * 40}) + "\n")
        out.write('{"seq": "done", "level": "error"}\n')
        out.flush()
        if len(sys.argv) > 3:
            Path(sys.argv[3]).write_text("flooded")
        while True:
            time.sleep(3600)
    elif mode == "big":
        big(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), Path(sys.argv[5]), float(sys.argv[6]) if len(sys.argv) > 6 else 0.0)
    elif mode == "spawn":
        import subprocess

        grandchild = subprocess.Popen([sys.executable, __file__, "hang"])
        Path(sys.argv[2]).write_text(str(grandchild.pid))
        while True:
            time.sleep(3600)
    elif mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
