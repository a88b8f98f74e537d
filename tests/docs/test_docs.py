"""Every command and example in README.md, docs/*.md and the plugin's skills runs here (issue 14, item 19).

The documents are listed once, in doc_blocks.DOCS. Per fenced block:

- commands (`console` lines after `$ `, `sh` lines, `$ ` lines of a plain block, a plain block that is a
  single `attend ...` command) run in order, in one temporary XDG home per document, each expected to
  exit 0 (or the block's `<!-- docs: exit N -->`): an `attend ...` line whose only shell work is
  splitting words (quotes, a trailing comment, a leading `~/`; no expansion, glob, pipe, redirection or
  list) runs `attend.cli.main` in-process with the words bash would give it (a test compares them with
  bash's), the same environment and folder; every other line runs for real with `bash -c`, through the
  real `attend` (a shim on PATH runs `python -m attend`). tests/cli/test_entry_point.py runs each command through the real entry point.
  YAML files a page shows at a path (`# ~/.config/...` first line) are written there first, so the page's
  commands act on the page's own examples;
- a sensor file compiles clean (`attend compile --check`), a test file passes (`attend test`), a trigger
  or a `triggers:` map compiles (`attend.compile_trigger`), a config.yaml example loads without errors,
  a fragment (`command:` or `mcp:` block) validates inside a minimal sensor of its kind;
- JSON parses; Python runs; every `attend ...` command in inline code, JSON and markdown blocks parses
  with the real command-line grammar;
- sample notification lines of shipped sensors carry the priority their trigger's magnitude gives, and
  docs/diagnostics.md's sample diagnostics are the golden corpus's own lines.

Opt-outs are `<!-- docs: skip REASON -->` markers in the documents (few, each with its reason);
`test_opt_outs_are_few_and_give_a_reason` lists them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_blocks import REPO, Block, all_blocks, blocks, documents, page_directives

import attend
from attend.cli import bind_project, build_parser
from attend.spec import layer_paths
from attend.spec.config import CONFIG_KEYS as DECLARED_CONFIG_KEYS
from attend.spec.config import load_config
from attend.spec.loading import parse_yaml

#: Blocks checked by another test: (document, what the lines start with) → that test.
ELSEWHERE = {
    ("README.md", "/plugin "): "tests/plugin/test_plugin.py runs these with the real Claude Code CLI",
}
#: At most this many opt-out markers in all documents together.
MAX_OPT_OUTS = 4


def _doc_ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(REPO)) for p in paths]


DOCUMENTS = documents()


def skipped(block: Block) -> bool:
    return block.directive("skip") is not None


# --------------------------------------------------------------------------- commands


def commands_of(block: Block) -> list[str]:
    """The commands a block shows, in order (empty for an example that is not a command)."""
    lines = block.body.split("\n")
    if block.lang in ("sh", "bash", "shell"):
        return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if block.lang in ("console", ""):
        shown = [ln[2:] for ln in lines if ln.startswith("$ ")]
        if shown:
            return shown
        if block.lang == "" and len([ln for ln in lines if ln.strip()]) == 1 and lines[0].startswith("attend "):
            return [] if is_synopsis(lines[0]) else [lines[0]]
    return []


def is_synopsis(command: str) -> bool:
    """A grammar line (`attend compile --check [PATH...]`), not a command to run."""
    return bool(re.search(r"\[|\||\.\.\.|…|<[a-z]|\b[A-Z]+\b", command.split("#")[0]))


def expand_home_path(text: str, home: Any) -> Path | None:
    for prefix, base in (("~/.config/", home.config), ("$XDG_CONFIG_HOME/", home.config), ("~/", home.root)):
        if text.startswith(prefix):
            return base / text[len(prefix):]
    return None


#: The MCP servers a page may register with `<!-- docs: mcp-server NAME -->`.
MCP_SERVERS = {"tracker": Path(__file__).with_name("tracker_server.py")}


def stage_files(doc: Path, home: Any) -> None:
    """Put the page's own files (and the sensors and MCP servers it borrows) where its commands expect them."""
    servers = {name: {"command": sys.executable, "args": [str(MCP_SERVERS[name])]}
               for (name,) in page_directives(doc, "mcp-server")}
    if servers:
        (home.root / ".claude.json").write_text(json.dumps({"mcpServers": servers}))
    for source, name in page_directives(doc, "sensor"):
        (body,) = [b.body for b in blocks(REPO / source) if b.lang == "yaml" and f"\nname: {name}\n" in f"\n{b.body}\n"]
        home.write_user_sensor(name, body + "\n")
    for block in blocks(doc):
        if block.lang != "yaml" or skipped(block):
            continue
        if block.marker[:2] in (("check", "sensor"), ("check", "test")):
            target = home.user_sensors / block.marker[2]
        else:
            first = block.body.split("\n", 1)[0]
            target = expand_home_path(first[2:].strip(), home) if first.startswith("# ") else None
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body + "\n")


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    """A folder with an `attend` that runs this checkout's attend with this interpreter."""
    folder = tmp_path_factory.mktemp("shim")
    exe = folder / "attend"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m attend "$@"\n')
    exe.chmod(0o755)
    return folder


#: What makes an unquoted stretch of a line the shell's business beyond splitting words: expansion,
#: globs, redirection, lists, escapes, history (`~` is allowed only as a word's `~/` prefix, see below).
SHELL_SYNTAX = re.compile(r"[|&;<>$`*?()\[\]{}\\!\n]")
#: A line as `plain_words` reads it: unquoted text, a '...' string, a "..." string free of expansion and
#: escapes, or a comment (a `#` that starts a word) to the end.
SHELL_PIECE = re.compile(r"""(?P<plain>[^'"#\s]+|\s+)|'(?P<single>[^']*)'|"(?P<double>[^"$`\\!]*)"|(?P<comment>#.*)""")


def plain_words(command: str, home_dir: str) -> list[str] | None:
    """The words bash would give `command`'s program, when splitting them is all bash would do: quotes
    removed, a trailing comment dropped, an unquoted `~/` at a word's start made `home_dir/`. None for a
    line where the shell does more (expansion, a glob, a pipe or redirection, a list, an escape)."""
    words: list[str] = []
    word: str | None = None
    pos = 0
    while pos < len(command):
        piece = SHELL_PIECE.match(command, pos)
        if piece is None:
            return None  # an unterminated quote, an expansion or escape inside "...", a `#` inside a word
        pos = piece.end()
        if piece["comment"] is not None:
            if word is not None:  # `a#b` is one word to bash
                return None
            break
        plain = piece["plain"]
        if plain is not None and plain.isspace():
            if word is not None:
                words.append(word)
            word = None
            continue
        if plain is not None:
            if SHELL_SYNTAX.search(plain) or "~" in plain[1:] or (plain.startswith("~") and (
                    word is not None or not plain.startswith("~/"))):
                return None
            plain = home_dir + plain[1:] if plain.startswith("~/") else plain
        text = plain if plain is not None else piece["single"] if piece["single"] is not None else piece["double"]
        word = (word or "") + text
        # a `#` right after a quote is part of the word, not a comment
        if pos < len(command) and command[pos] == "#":
            return None
    if word is not None:
        words.append(word)
    return words


#: The NATS servers `run_command` started for a page (stopped at its end).
NATS_SERVERS: list[Any] = []


def run_command(command: str, home: Any, shim: Path) -> subprocess.CompletedProcess[str]:
    if command.startswith("nats-server "):
        # A page's local NATS server (`<!-- docs: nats-server -->`, docs/peers.md): the real binary, started by
        # tests/nats_rig.py with a temporary store on a port the kernel picks (never the fixed 4222 two runs
        # could both want), ready on its own signal; the home's URL names that port, as the default names 4222.
        from tests.conftest import run_in_process

        from nats_rig import NatsServer

        server = NatsServer(home.root / "nats-server")
        NATS_SERVERS.append(server)
        return run_in_process(["settings", "set", "attend.peers.nats.url", server.url], env=home.env(), cwd=home.project)
    words = plain_words(command, home.env()["HOME"]) if command.startswith("attend ") else None
    if words is not None:  # a line whose only shell work is splitting words (and dropping a comment)
        from tests.conftest import run_in_process

        return run_in_process(words[1:], env=home.env(), cwd=home.project)
    if command.startswith("make "):
        # `make run` starts the daemon for good and `make test` is this suite: check the targets exist
        # and what they would run (make -n), from the repository.
        return subprocess.run(["make", "-n", *command.split("#")[0].split()[1:]], cwd=REPO, capture_output=True,
                              text=True, timeout=60)
    env = home.env(PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-c", command], cwd=home.project, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_words_of_a_command_run_in_process_are_the_words_bash_gives(tmp_path):
    """Every documented `attend` line run in-process gets the argv bash would give the real `attend`."""
    lines = [c for b in all_blocks() if not skipped(b) for c in commands_of(b) if c.startswith("attend ")]
    plain = [c for c in lines if plain_words(c, str(tmp_path)) is not None]
    assert any("#" in c for c in plain) and any("'" in c for c in plain) and any("~/" in c for c in plain)
    script = "".join(f"printf '%s\\0' {c[len('attend '):]}\nprintf '\\n\\0'\n" for c in plain)
    done = subprocess.run(["bash", "-c", script], env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    by_bash = [w.split("\0")[:-1] for w in done.stdout.split("\n\0")[:-1]]
    assert by_bash == [plain_words(c, str(tmp_path))[1:] for c in plain]  # type: ignore[index]
    for line in ("attend x $HOME", "attend x *.yaml", "attend x | head", "attend x > f", "attend x a~/b",
                 'attend x "$HOME"', "attend x a#b", "attend x 'unterminated", "attend x \\n", "attend x; y"):
        assert plain_words(line, str(tmp_path)) is None, line


#: A page that registers an MCP server (`<!-- docs: mcp-server NAME -->`) probes it for real: heavy (tests/conftest.py).
RUN_DOCUMENTS = [pytest.param(d, marks=[pytest.mark.heavy] if page_directives(d, "mcp-server")
                              or page_directives(d, "nats-server") else [])
                 for d in DOCUMENTS]


@pytest.mark.parametrize("doc", RUN_DOCUMENTS, ids=_doc_ids(DOCUMENTS))
def test_every_command_of_the_document_runs(doc: Path, home, shim):
    if "ip -json" in doc.read_text() and shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed (the page's example sensor runs it)")
    stage_files(doc, home)
    ran, failures = 0, []
    try:
        ran, failures = _run_blocks(doc, home, shim)
    finally:
        while NATS_SERVERS:
            NATS_SERVERS.pop().stop()
    assert not failures, "\n\n".join(failures)
    if any(commands_of(b) for b in blocks(doc) if not skipped(b)):
        assert ran


def _run_blocks(doc: Path, home: Any, shim: Path) -> tuple[int, list[str]]:
    ran, failures = 0, []
    for block in blocks(doc):
        if skipped(block):
            continue
        expected = int((block.directive("exit") or ("0",))[0])
        setup = block.directive("setup")
        if setup:  # what the page assumes exists before this block (a file a build writes, say)
            done = run_command(" ".join(setup), home, shim)
            assert done.returncode == 0, f"{block.where}: setup failed: {done.stderr}"
        for command in commands_of(block):
            if any(doc.name == d.split("/")[-1] and command.startswith(p) for d, p in ELSEWHERE):
                continue
            done = run_command(command, home, shim)
            ran += 1
            if done.returncode != expected or "Traceback" in done.stderr:
                failures.append(f"{block.where}: `{command}` exited {done.returncode} (expected {expected}):\n"
                                f"{done.stdout[-800:]}{done.stderr[-800:]}")
    return ran, failures


# --------------------------------------------------------------------------- YAML


SENSOR_TOP = {"spec", "name"}
CONFIG_KEYS = {*DECLARED_CONFIG_KEYS, "attend"}  # config.yaml's keys as the schema declares them (spec.config)
FRAGMENT_BASE = {
    "command": {"argv": ["true"], "output": "json"},
    "mcp": {"server": "doc", "tool": "doc"},
}


def deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def yaml_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang == "yaml" and not skipped(b) and b.marker[:1] != ("check",)]


@pytest.mark.parametrize("block", yaml_blocks(), ids=lambda b: b.where)
def test_every_yaml_example_is_valid(block: Block, home, tmp_path):
    parsed = parse_yaml(block.body, block.where)
    assert not parsed.diagnostics, parsed.diagnostics
    data = parsed.data
    assert isinstance(data, dict), f"{block.where}: not a mapping"
    first = block.body.split("\n", 1)[0]
    staged = expand_home_path(first[2:].strip(), home) if first.startswith("# ") else None
    if "polls" in data and staged is not None:
        stage_files(REPO / block.doc, home)  # the test file beside its page's sensor, where the page puts it
        done = home.attend("test", str(staged))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 of 1 test file(s) passed" in done.stdout
    elif SENSOR_TOP <= set(data):
        name = data["name"]
        target = tmp_path / "doc" / f"{name}.yaml"
        target.parent.mkdir()
        target.write_text(block.body + "\n")
        done = home.attend("compile", "--check", str(target))
        assert done.returncode == int((block.directive("exit") or ("0",))[0]), done.stdout + done.stderr
    elif "polls" in data:
        sensor = data.get("sensor")
        assert sensor, f"{block.where}: a test file example names its sensor"
        target = tmp_path / f"{sensor}.test.yaml"
        target.write_text(block.body + "\n")
        done = home.attend("test", str(target))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 of 1 test file(s) passed" in done.stdout
    elif set(data) == {"triggers"}:
        for name, definition in data["triggers"].items():
            assert attend.compile_trigger(definition, name=name).name == name
    elif "on" in data:
        assert attend.compile_trigger(data, name="doc").name == "doc"
    elif set(data) <= CONFIG_KEYS:
        home.config_file.parent.mkdir(parents=True, exist_ok=True)
        home.config_file.write_text(block.body + "\n")
        config = load_config(layer_paths(home.project, home.env()))
        errors = [d for d in config.diagnostics if str(d.severity) == "error"]
        assert not errors, errors
    else:
        # A fragment (a `command:` or `mcp:` block, cadence fields): valid inside a minimal sensor of its kind.
        kind = next((k for k in FRAGMENT_BASE if k in data), str(data.get("kind", "command")))
        assert kind in FRAGMENT_BASE, f"{block.where}: an example of no known kind; teach tests/docs what it is"
        sensor = deep_merge({"spec": 1, "name": "fragment", "kind": kind, kind: FRAGMENT_BASE[kind]}, data)
        if kind == "mcp" and "resource" in data["mcp"] and "tool" not in data["mcp"]:
            del sensor["mcp"]["tool"]  # a resource sensor names no tool (exactly one of the two)
        target = tmp_path / "fragment.yaml"
        target.write_text(json.dumps(sensor))
        done = home.attend("compile", "--check", "--strict", str(target))
        assert done.returncode == 0, done.stdout + done.stderr


# --------------------------------------------------------------------------- JSON, Python, the CLI grammar


def json_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang == "json" and not skipped(b)]


@pytest.mark.parametrize("block", json_blocks(), ids=lambda b: b.where)
def test_every_json_example_parses(block: Block):
    json.loads(block.body)


def python_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang == "python" and not skipped(b) and b.marker[:1] != ("check",)]


@pytest.mark.parametrize("block", python_blocks(), ids=lambda b: b.where)
def test_every_python_example_runs(block: Block, home):
    exec(compile(block.body, block.where, "exec"), {"__name__": "doc_example"})  # noqa: S102


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def cited_commands() -> list[tuple[str, str]]:
    """(where, command) for every concrete `attend ...` command cited in prose, JSON or markdown blocks."""
    out = []
    for path in documents():
        doc = str(path.relative_to(REPO))
        for number, line in enumerate(path.read_text().split("\n"), 1):
            for span in re.findall(r"`(attend [^`]+)`", line):
                out.append((f"{doc}:{number}", span))
        for block in blocks(path):
            if block.lang == "json":
                for text in strings_in(json.loads(block.body)):
                    out.extend((block.where, m) for m in re.findall(r"(?:^|&& )(attend [^\n;&|]+)", text))
    return [(w, c) for w, c in out if not is_synopsis(c)]


def parses(parser: Any, words: list[str]) -> bool:
    try:
        parser.parse_args(bind_project(words))
    except SystemExit as exit_:
        return exit_.code == 0
    return True


def test_every_cited_attend_command_parses_with_the_real_grammar(capsys):
    parser = build_parser()
    bad = []
    cited = cited_commands()
    assert len(cited) > 30
    for where, command in cited:
        # The shell's part: variables expand to a directory, `> file` is a redirection, `#` a comment.
        text = re.sub(r"\$\{?[A-Z_]+\}?", "/tmp", command).split(" #")[0].split(">")[0]
        words = shlex.split(text)[1:]
        # Prose that names a command (`attend explain`) rather than running one: its --help must exist.
        named = all(re.fullmatch(r"[a-z]+", w) for w in words)
        if not (parses(parser, words) or (named and parses(parser, [*words, "--help"]))):
            bad.append(f"{where}: {command}")
    capsys.readouterr()
    assert bad == []


# --------------------------------------------------------------------------- sample output


NOTIFICATION = re.compile(r"\[attend sensor=(?P<sensor>[a-z0-9_-]+) priority=(?P<priority>\w+)\] (?P<text>.*)")


def shipped_triggers() -> dict[str, dict]:
    """Each shipped sensor's lines: its triggers, its digest line (as heavy as its heaviest trigger), and
    for the messages sensor the cold start's summary line (as heavy as its lightest trigger)."""
    from attend.runtime.sessions.cold_start import MESSAGES_SOURCE, summary_text

    folder = REPO / "src" / "attend" / "sensors.d"
    out = {}
    for path in folder.glob("*.yaml"):
        if path.name.endswith(".test.yaml"):
            continue
        doc = yaml.safe_load(path.read_text()) or {}
        triggers = dict(doc.get("triggers") or {})
        weights = [float(t.get("magnitude", 1)) for t in triggers.values()]
        if isinstance(doc.get("digest"), dict):
            triggers["(digest)"] = {"description": doc["digest"]["description"], "magnitude": max(weights)}
        if doc.get("source") == MESSAGES_SOURCE:
            triggers["(cold start)"] = {"description": "{count}" + summary_text(2)[1:], "magnitude": min(weights)}
        out[path.stem] = triggers
    return out


def priority_of(magnitude: float) -> str:
    from attend.runtime.delivery import priority

    return priority(magnitude)


def template_regex(description: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^}]*\}", description)
    return re.compile(".+".join(re.escape(p) for p in parts) + r"( \(.*\))?$")


def sample_notifications() -> list[tuple[str, str]]:
    out = []
    for block in all_blocks():
        for line in block.body.split("\n"):
            match = NOTIFICATION.search(line)
            if match and not skipped(block):
                out.append((block.where, match.group(0)))
    return out


def test_sample_notifications_of_shipped_sensors_carry_their_trigger_s_priority():
    triggers = shipped_triggers()
    samples = [(w, s) for w, s in sample_notifications() if NOTIFICATION.match(s)["sensor"] in triggers]
    assert samples
    wrong = []
    previous = None
    for where, sample in samples:
        match = NOTIFICATION.match(sample)
        part = re.match(r"message (\S+) \((\d)/(\d)\) ", match["text"])
        if part and int(part[2]) > 1:  # a later part of a long message (docs/peers.md): a line of the one before
            if previous is None or (previous["sensor"], previous["priority"]) != (match["sensor"], match["priority"]) \
                    or part[1] not in previous["text"]:
                wrong.append(f"{where}: {sample!r} is part {part[2]} of a message whose first line is not before it")
            continue
        previous = match
        candidates = [t for t in triggers[match["sensor"]].values()
                      if template_regex(str(t.get("description", ""))).match(match["text"])]
        if not candidates:
            wrong.append(f"{where}: no trigger of {match['sensor']} prints {match['text']!r}")
        elif match["priority"] not in {priority_of(float(t.get("magnitude", 1))) for t in candidates}:
            wrong.append(f"{where}: {sample!r} but its trigger's magnitude gives "
                         f"{sorted({priority_of(float(t.get('magnitude', 1))) for t in candidates})}")
    assert wrong == []


def test_readme_s_context_sample_is_the_line_the_context_sensor_prints():
    """The sample is the shipped template rendered with the crate's own numbers (`83.0%`, never `83%`)."""
    from attend.sensors.context import percent_of

    template = next(t["description"] for t in shipped_triggers()["context"].values()
                    if "{percent}% used" in str(t["description"]))
    lines = [s for w, s in sample_notifications() if w.startswith("README.md") and "sensor=context" in s]
    assert lines
    for line in lines:
        tokens, window = (int(x) for x in re.search(r"\((\d+) of (\d+) tokens\)", line).groups())
        expected = template.format(percent=percent_of(tokens, window), tokens=tokens, window=window)
        assert NOTIFICATION.match(line)["text"] == expected


def test_the_away_line_samples_are_the_line_a_restarting_stream_prints():
    """README's and runtime.md's `N notifications while this session was away` lines are news.py's own."""
    from attend.runtime.sessions.news import AWAY_SENSOR, away_text

    lines = [s for _, s in sample_notifications() if NOTIFICATION.match(s)["sensor"] == AWAY_SENSOR]
    assert {w.split(":")[0] for w, s in sample_notifications() if s in lines} >= {"README.md", "docs/runtime.md"}
    for line in lines:
        match = NOTIFICATION.match(line)
        count = int(match["text"].split()[0])
        assert match["text"] == away_text(count) and match["priority"] in ("medium", "low")


def test_diagnostics_md_samples_are_lines_of_the_golden_corpus():
    golden = "\n".join(p.read_text() for p in (REPO / "tests" / "data" / "spec" / "golden").glob("*.txt"))
    samples = [ln for b in blocks(REPO / "docs" / "diagnostics.md") for ln in b.body.split("\n")
               if re.match(r"^cases/\S+:\d+:\d+: (error|warning): \[", ln)]
    assert len(samples) > 20
    assert [s for s in samples if s not in golden] == []


def test_opt_outs_are_few_and_give_a_reason():
    opt_outs = [b for b in all_blocks() if skipped(b)]
    assert len(opt_outs) <= MAX_OPT_OUTS, [b.where for b in opt_outs]
    assert all(len(b.directive("skip")) >= 3 for b in opt_outs), "each skip says why, in words"


# --------------------------------------------------------------------------- claims made in prose


def test_readme_s_one_line_override_is_valid_for_every_shipped_sensor(home):
    (override,) = re.findall(r"\(`([a-z_]+: [^`]+)` alone is a valid override\)", (REPO / "README.md").read_text())
    shipped = [p.stem for p in (REPO / "src" / "attend" / "sensors.d").glob("*.yaml") if ".test." not in p.name]
    assert len(shipped) >= 10
    for name in shipped:
        home.write_user_sensor(name, f"spec: 1\n{override}\n")
    done = home.attend("compile", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_both_shipped_sensor_tables_list_every_shipped_sensor_with_its_kind_and_default():
    # journal and docker-events shipped without a row in either table, and the authoring one lacked the mcp ones
    from attend.spec import load_set

    tables = {"README.md": REPO / "README.md", "docs/authoring.md": REPO / "docs" / "authoring.md"}
    shipped = load_set(REPO, {"HOME": "/nonexistent"}).sensors
    for page, path in tables.items():
        text = path.read_text().split("## The shipped sensors", 1)[1]
        rows = {m[1]: (m[2], m[3]) for m in re.finditer(r"^\| `([a-z0-9-]+)` \| ([a-z]+)[^|]*\| (yes|no) \|", text, re.M)}
        assert set(rows) == {name for name, s in shipped.items() if s.files[0].layer == "shipped"}, page
        for name, (kind, enabled) in rows.items():
            data = shipped[name].data
            assert (kind, enabled) == (data["kind"], "yes" if data["enabled"] else "no"), (page, name)


def test_every_page_names_the_same_schema_file():
    text = "\n".join(p.read_text() for p in documents())
    written = set(re.findall(r"attend spec schema > (\S+?)`?$", text, re.M))
    referenced = set(re.findall(r"\$schema=(\S+?)`", text))
    assert len(written) == 1 and referenced == written, (written, referenced)
