"""The argparse front of the `attend` command (DESIGN.md, CLI).

This module only parses arguments and dispatches; each command's code lives with the concept it
belongs to and is imported when that command runs, so `attend compile --check` never imports trio or
mcp. Exit codes: 0 done, 1 problems found (check, test), 2 usage; settings add 3 rejected,
4 overridden by a higher layer, 5 write failed.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from attend.errors import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing stays unimported at run time (the lint path's start-up)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    #: The subparsers of `attend`: argparse's own, or the stand-in that builds only the running command.
    _Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser] | _OnlyOne"
    #: A command's parser: argparse's own, or the stand-in of a command that is not running.
    _CommandParser: TypeAlias = "argparse.ArgumentParser | _Unbuilt"

__all__ = ["COMMANDS", "build_parser", "main"]



def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it ($COLUMNS, then stdout, then 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            stdout = sys.__stdout__  # None when attend started without one
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as argparse makes it, without importing shutil.

    argparse builds a formatter on every `add_argument` (to check the metavar) and each one imported
    shutil (and with it bz2 and lzma) to ask the terminal's width: a few ms of every command's start-up.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _MissingRequired(Exception):
    """argparse found a required argument missing; raised instead of exiting, so unrecognized ones go first."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser (and, through `add_subparsers`, every subparser) using `_Formatter`.

    A usage error names what is wrong in the words of the command it belongs to: an argument nobody
    recognizes is reported by the innermost (sub)command's parser, with that command's usage line
    (argparse hands it up to `attend` itself), and before a required argument found missing (argparse
    would say only `required: --check` to `attend compile --bogus`).
    """

    _relaxed = False  # True while `_unrecognized` parses with nothing required

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        try:
            parsed, extras = super().parse_known_args(args, namespace)
        except _MissingRequired as missing:
            extras = self._unrecognized(args)
            if not extras:
                super().error(str(missing) + self._choices_of_missing_command())
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _choices_of_missing_command(self) -> str:
        """` (choose from run, compile, ...)` when a command word is what is missing (bare `attend`, `attend
        peers`), as argparse says for a wrong one; else ''."""
        for action in self._actions:
            if action.required and isinstance(action.choices, dict) and action.choices:
                return f" (choose from {', '.join(action.choices)})"
        return ""

    def _unrecognized(self, args: Any) -> list[str]:
        """The words of `args` this parser recognizes none of, parsing as if no argument were required."""
        required = [action for action in self._actions if action.required]
        for action in required:
            action.required = False
        self._relaxed = True
        try:
            return super().parse_known_args(args, None)[1]
        finally:
            self._relaxed = False
            for action in required:
                action.required = True

    def error(self, message: str) -> Any:
        from gettext import gettext  # argparse's own translation of its words (imported by argparse already)

        required = gettext("the following arguments are required: %s")
        if not self._relaxed and message.startswith(required[:-2]):
            raise _MissingRequired(message)
        super().error(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        # What `--help` and `--version` printed goes out now, inside main(): a reader that went away
        # (`attend --version | true`) ends the command quietly there, as for every command.
        sys.stdout.flush()
        super().exit(status, message)


#: The help of every `--json` flag.
JSON_HELP = "print JSON instead of text (the same content, for scripts)"


def _project_parent() -> _Parser:
    parent = _Parser(add_help=False)
    parent.add_argument(
        "--project",
        nargs="?",
        const=".",
        default=None,
        metavar="DIR",
        help="the project directory (default: the working directory); on commands that write a layer, "
        "naming it also chooses the project layer",
    )
    return parent


def _add_layer(parser: _CommandParser) -> None:
    """`--layer user|project` on a command that writes a layer: the layer, whatever `--project` names."""
    parser.add_argument(
        "--layer", choices=("user", "project"), default=None,
        help="the layer to write (default: project when --project is named, else user); with --layer, "
        "--project DIR only says where the project is",
    )


def _add_session(parser: _CommandParser) -> None:
    parser.add_argument(
        "--session", metavar="ID", default=None,
        help="the session this process serves (default: $ATTEND_SESSION, else Claude Code's session, else pid-<pid>)",
    )


#: The top-level commands, in the order `attend --help` lists them.
COMMANDS = ("run", "compile", "explain", "test", "sensors", "settings", "drain", "peers", "spec")
#: The handler of `attend drain`.
DRAIN = "attend.commands.drain:main"
#: The `drain --format` values Claude Code runs as hooks: a problem with their command line never exits 2
#: (which would block the agent, or wake it, with attend's message).
HOOK_FORMATS = ("hook", "doorbell")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command-line grammar of attend, or with `only` just that command's part of it.

    Each command's `handler` default is a 'module:function' string, imported only when that command
    runs (`_resolve`), so a command pays only for its own imports. `main` builds only the command it
    was given (building all of them, with argparse's per-message gettext lookups, was a fifth of
    `compile --check`'s start-up); anything else (`--help`, a mistyped command) gets the whole parser.
    """
    common = _project_parent()
    parser = _Parser(
        prog="attend",
        description="A sensor host for coding agents: YAML sensors, compiled triggers, one line when it matters.",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print attend's version and exit")
    real = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub: _Subparsers = real if only is None else _OnlyOne(real, only)

    p = sub.add_parser(
        "run", parents=[common],
        help="this session's Monitor stream; polls the project unless another session already does",
    )
    _add_session(p)
    p.add_argument("--headless", action="store_true",
                   help="poll and journal, print nothing, end once no session of the project has been live "
                        "for 10 minutes (the hooks start one when no poller runs)")
    p.set_defaults(handler="attend.commands.run:main")

    p = sub.add_parser("compile", parents=[common], help="check sensor files and their triggers")
    p.add_argument("--check", action="store_true", required=True, help="check only (the one mode today)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: every layer)")
    p.add_argument("--format", choices=("text", "json", "github"), default="text")
    p.add_argument("--strict", action="store_true", help="warnings fail the check too")
    p.set_defaults(handler="attend.commands.check:main")

    p = sub.add_parser("explain", parents=[common], help="a merged sensor with provenance and compiled plans")
    p.add_argument("target", metavar="NAME[/TRIGGER]")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.explain:main")

    p = sub.add_parser("test", parents=[common], help="run sensor test files")
    p.add_argument("paths", nargs="*", metavar="PATH", help="test files or folders (default: every layer)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.test:main")

    _add_sensors(sub, common)
    _add_settings(sub, common)

    p = sub.add_parser("drain", parents=[common], help="print undelivered message-lane notifications")
    p.add_argument("--format", choices=("hook", "plain", "doorbell"), default="plain",
                   help="hook: read a Claude Code hook's JSON on stdin (SessionStart, UserPromptSubmit, PostToolUse, "
                        "Stop) and answer in that event's format; doorbell: a Stop hook declared asyncRewake, which "
                        "waits until the session has a line worth a turn, writes it on stderr and exits 2")
    _add_session(p)
    # Brief: it runs without the cyclic garbage collector when `python -m attend` started it so (main).
    p.set_defaults(handler=DRAIN, brief=True)

    _add_peers(sub, common)

    p = sub.add_parser("tune", parents=[common],
                       help="engagement settings from the pace of your recent Claude Code sessions")
    p.add_argument("--projects", metavar="N", type=_positive, default=None,
                   help="how many projects' transcripts to read, newest first (default 10)")
    p.add_argument("--sessions", metavar="N", type=_positive, default=None,
                   help="how many sessions of each project, newest first (default 5)")
    p.add_argument("--apply", action="store_true", help="write the values into the user layer's config.yaml")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.tune:main")

    p = sub.add_parser("permissions", parents=[common],
                       help="the permissions the enabled sensors require that Claude Code's settings do not allow")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.permissions:main")

    p = sub.add_parser("cleanup", parents=[common],
                       help="remove the state of projects whose folder is gone (never by age)")
    p.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")
    p.add_argument("--all", action="store_true",
                   help="also the state of stopped projects (folder there, nothing of attend running for it); "
                        "their peers trays stay")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.cleanup:main")

    p = sub.add_parser("doctor", parents=[common], help="what a working setup needs, one line per check with its fix")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.doctor:main")

    p = sub.add_parser("tui", parents=[common], help="the sensors tab: list, toggle, edit, preview and apply")
    _add_layer(p)
    p.set_defaults(handler="attend.commands.tui:main")

    p = sub.add_parser("spec", parents=[common], help="the sensor spec")
    spec_sub = p.add_subparsers(dest="spec_command", metavar="WHAT", required=True)
    q = spec_sub.add_parser("schema", parents=[common], help="print the JSON Schema of spec v1")
    q.set_defaults(handler="attend.commands.spec:main")
    return parser


class _OnlyOne:
    """A subparsers action that builds one command for real and a stand-in for the others."""

    def __init__(self, sub: argparse._SubParsersAction[_Parser], only: str) -> None:
        self.sub, self.only = sub, only

    def add_parser(self, name: str, **kwargs: Any) -> _CommandParser:
        if name == self.only:
            return self.sub.add_parser(name, **kwargs)
        return _Unbuilt()  # never parsed: kept off the real grammar, and costs nothing to fill


class _Unbuilt:
    """Takes every call a parser of a command that is not running would get, and builds nothing.

    A throwaway `ArgumentParser` per other command still paid for its help strings' gettext lookups.
    """

    def _ignore(self, *args: object, **kwargs: object) -> _Unbuilt:
        return self

    # what the grammar calls on a parser, its subparsers and its groups
    add_argument = add_parser = add_subparsers = add_mutually_exclusive_group = set_defaults = _ignore


def _add_peers(sub: _Subparsers, common: _Parser) -> None:
    p = sub.add_parser("peers", parents=[common], help="messages between sessions on this machine")
    peers_sub = p.add_subparsers(dest="peers_command", metavar="WHAT", required=True)

    def add(name: str, help_: str) -> _CommandParser:
        q = peers_sub.add_parser(name, parents=[common], help=help_)
        _add_session(q)
        q.set_defaults(handler="attend.commands.peers:main")
        return q

    q = add("send", "send TEXT to a project's sessions, a channel, or (default) the open channel")
    target = q.add_mutually_exclusive_group()
    target.add_argument("--to", metavar="PROJECT_DIR", help="the project whose sessions get it")
    target.add_argument("--channel", metavar="NAME", help="a channel (see `peers channels`)")
    q.add_argument("--re", metavar="ID", help="the message this one answers")
    q.add_argument("--on-behalf-of", metavar="WHO",
                   help="whom you send it for (default: the user this process runs as)")
    q.add_argument("text", metavar="TEXT")
    q = add("reply", "answer message ID, or the last message this session received, where it came from")
    q.add_argument("id", nargs="?", metavar="ID", help="the message to answer (default: the last one received)")
    q.add_argument("--on-behalf-of", metavar="WHO",
                   help="whom you send it for (default: the user this process runs as)")
    q.add_argument("text", metavar="TEXT")
    q = add("inbox", "the messages this session receives (newest 20), or one in full")
    which = q.add_mutually_exclusive_group()
    which.add_argument("id", nargs="?", metavar="ID", help="one message, in full")
    which.add_argument("--id", dest="message_id", metavar="ID", help="one message, in full (the same as ID)")
    q.add_argument("--all", action="store_true", help="every message, not only the newest 20")
    q.add_argument("--limit", metavar="N", type=_positive, default=None,
                   help="how many messages a page holds (default 20)")
    q.add_argument("--page", metavar="P", type=_positive, default=1,
                   help="which page, newest first: 1 is the newest N, 2 the N before them (default 1)")
    q.add_argument("--before", metavar="ID", help="only messages older than message ID")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q = add("list", "the live sessions on this machine")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q = add("whoami", "this process's session and project")
    q.add_argument("--machine", action="store_true", help="this machine's id and name instead")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q = add("join", "join a channel")
    q.add_argument("name", metavar="NAME")
    q = add("leave", "leave a channel")
    q.add_argument("name", metavar="NAME")
    q = add("channels", "the channels and their members")
    q.add_argument("--json", action="store_true", help=JSON_HELP)


def _positive(text: str) -> int:
    """An argument that counts something: a whole number from 1 (a usage error otherwise: exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def _add_sensors(sub: _Subparsers, common: _Parser) -> None:
    if isinstance(sub, _OnlyOne) and sub.only != "sensors":
        return  # another command runs: not even its help's figures are imported
    from attend.spec.schema import HISTORY_KEPT

    p = sub.add_parser("sensors", parents=[common], help="list, poll, probe, fire and manage sensors")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler="attend.commands.sensors:sensors_list")
    s = p.add_subparsers(dest="sensors_command", metavar="ACTION")

    q = s.add_parser("list", parents=[common], help="every sensor with its live state")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_list")

    q = s.add_parser("poll", parents=[common], help="one real poll and each trigger's verdict")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--dry-run", action="store_true", help="stop before delivery; store nothing")
    q.add_argument("--for", dest="stream_for", metavar="DURATION", default="5s",
                   help="a streaming command (output: stream): how long to collect its records (default 5s)")
    q.add_argument("--session", metavar="ID", default=None,
                   help="a scope: session sensor: the session to poll it for (default: $ATTEND_SESSION, else "
                        "Claude Code's session)")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_poll")

    q = s.add_parser("probe", parents=[common], help="the MCP read-only probe; writes the probe record")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--confirm", action="store_true", help="record the operator's confirmation without a prompt")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_probe")

    q = s.add_parser("fire", parents=[common], help="a synthetic result through the real evaluation and delivery")
    q.add_argument("target", metavar="NAME[/TRIGGER]")
    q.add_argument("--input", metavar="FILE|-", help="the poll result (JSON or YAML); - reads standard input")
    q.add_argument("--dry-run", action="store_true", help="stop before delivery")
    q.add_argument("--commit", action="store_true", help="store the resulting trigger state")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_fire")

    q = s.add_parser("shelve", parents=[common], help="hold a sensor's (or trigger's) notifications for a while")
    q.add_argument("target", metavar="NAME[/TRIGGER]")
    q.add_argument("--for", dest="duration", metavar="DURATION", required=True, help="how long: 30m, 2h, 3600")
    q.add_argument("--reason", metavar="TEXT", help="why, shown with the shelf")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_shelve")

    q = s.add_parser("unshelve", parents=[common], help="take a shelf down")
    q.add_argument("target", metavar="NAME[/TRIGGER]")
    q.set_defaults(handler="attend.commands.sensors:sensors_unshelve")

    q = s.add_parser("history", parents=[common], help="the last poll verdicts: why it fired or was held")
    q.add_argument("name", metavar="NAME", nargs="?",
                   help="the sensor (default: every sensor with a poll that fired, held or failed something)")
    q.add_argument("--trigger", metavar="T", help="only this trigger")
    q.add_argument("--limit", metavar="N", type=int, default=HISTORY_KEPT,
                   help=f"how many polls, newest first (default {HISTORY_KEPT}, all that are kept)")
    q.add_argument("--all", dest="everything", action="store_true",
                   help="every poll and every trigger (default: only the polls that fired or held something, "
                        "or failed)")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(handler="attend.commands.sensors:sensors_history")

    q = s.add_parser("copy", parents=[common], help="copy a sensor to a new name")
    q.add_argument("source", metavar="SRC")
    q.add_argument("dest", metavar="DST")
    _add_layer(q)
    q.set_defaults(handler="attend.commands.sensors:sensors_copy")

    q = s.add_parser("rename", parents=[common], help="rename a user or project sensor")
    q.add_argument("source", metavar="OLD")
    q.add_argument("dest", metavar="NEW")
    _add_layer(q)
    q.set_defaults(handler="attend.commands.sensors:sensors_rename")

    q = s.add_parser("delete", parents=[common], help="delete a user or project sensor file")
    q.add_argument("source", metavar="NAME")
    _add_layer(q)
    q.set_defaults(handler="attend.commands.sensors:sensors_delete")


def _add_settings(sub: _Subparsers, common: _Parser) -> None:
    p = sub.add_parser("settings", parents=[common], help="every sensor field as a key, with provenance")
    s = p.add_subparsers(dest="settings_command", metavar="ACTION", required=True)
    for action, helptext in (
        ("get", "a key's effective value, default, layer and file"),
        ("set", "validate and write a value"),
        ("unset", "remove a key from a layer's file"),
        ("add", "add a value to a list key (project_sensors, requires, ...)"),
        ("remove", "remove a value from a list key"),
        ("list", "the stored and the effective view"),
        ("help", "a key's description, type and allowed values"),
        ("lint", "old config keys that sensor files replace"),
    ):
        q = s.add_parser(action, parents=[common], help=helptext)
        if action in ("get", "set", "unset", "add", "remove", "help"):
            q.add_argument("key", metavar="KEY")
        if action == "list":
            q.add_argument("key", metavar="PREFIX", nargs="?", default=None)
        if action in ("set", "add", "remove"):
            q.add_argument("value", metavar="VALUE")
            q.add_argument("--yaml", action="store_true",
                           help="read VALUE as YAML even for a string key (which otherwise takes it as typed)")
        if action in ("set", "unset", "add", "remove"):
            _add_layer(q)
        q.add_argument("--json", action="store_true", help=JSON_HELP)
        q.set_defaults(handler=f"attend.commands.settings:{action}")


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (importlib.metadata is slow to import)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        import attend

        sys.stdout.write(f"attend {attend.__version__}\n")
        parser.exit()  # flushes: a closed pipe ends quietly in main()


def _resolve(target: str) -> Any:
    module, _, func = target.partition(":")
    return getattr(__import__(module, fromlist=[func]), func)  # the importlib package stays unimported


def _names_directory(word: str) -> bool:
    """Whether the word after a bare `--project` is its DIR rather than the command's next argument."""
    if word.startswith("-"):
        return False
    return os.path.isdir(word) or word in (".", "..") or word.startswith(("/", "./", "../", "~"))


def bind_project(argv: Sequence[str]) -> list[str]:
    """Give every bare `--project` its DIR explicitly, so it never swallows a positional argument.

    `--project [DIR]` takes an optional value, and argparse would take any following word as DIR:
    `attend settings set --project attend.sensors.git.interval 45s` would lose its key. The next word
    is DIR only when it names a directory (an existing one, or one written as a path: `/x`, `./x`,
    `../x`, `~/x`, `.`, `..`); otherwise `--project` means the working directory.
    """
    words = list(argv)
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            out.extend(words[i:])
            break
        if word == "--project":
            following = words[i + 1] if i + 1 < len(words) else None
            if following == "":  # `--project "$CLAUDE_PROJECT_DIR"` with the variable unset: main says so
                out.append("--project=")
                i += 2
                continue
            if following is not None and _names_directory(following):
                out.append(f"--project={following}")
                i += 2
                continue
            out.append("--project=.")
        else:
            out.append(word)
        i += 1
    return out


def _project_after_command(words: list[str]) -> list[str]:
    """`attend --project DIR sensors` as `attend sensors --project=DIR`: every command takes `--project`.

    A `--project` before the command word goes to the end (before a `--`), where the innermost
    subcommand's parser reads it (an outer one's value would be reset by the inner one's default).
    """
    first = next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))
    early = [w for w in words[:first] if w.startswith("--project=")]
    if not early:
        return words
    rest = [w for w in words[:first] if not w.startswith("--project=")] + words[first:]
    end = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:end], *early, *rest[end:]]


def _hook_args(words: list[str]) -> argparse.Namespace | None:
    """The arguments of the one command line every hook of the plugin runs (plugin/hooks/hooks.json, after
    `bind_project`: `drain --format hook|doorbell --project=DIR`), as the parser gives them; None for any other.

    A hook runs after every tool call: building the parser (argparse's gettext lookups import locale)
    was some 3 ms of it. A test pins that the parser gives the same for every line this accepts.
    """
    if (len(words) == 4 and words[:2] == ["drain", "--format"] and words[2] in HOOK_FORMATS
            and words[3].startswith("--project=")):
        project = words[3].removeprefix("--project=")
        if project:
            return argparse.Namespace(version=None, command="drain", project=project, format=words[2], session=None,
                                      handler=DRAIN, brief=True)
    return None


def main(argv: Sequence[str] | None = None, *, collector_paused: bool = False) -> int:
    """Parse `argv`, run the chosen command and return its exit code.

    `collector_paused`: the caller turned the cyclic garbage collector off for the start-up
    (attend/__main__.py); it is turned back on before the command runs, unless the command is brief,
    once the command's modules are imported and with what start-up made frozen (`gc.freeze`).
    """
    words = _project_after_command(bind_project(sys.argv[1:] if argv is None else argv))
    command = next((w for w in words if not w.startswith("-")), None)
    try:
        args = _hook_args(words) or build_parser(command if command in COMMANDS else None).parse_args(words)
        if args.project == "":
            return _empty_project(args)
        if args.project is not None and not os.path.isdir(args.project):
            return _missing_project(args)
        # The layer a write goes to (--layer, else the project layer when --project was named), and the
        # project directory itself.
        layer = getattr(args, "layer", None)
        args.project_layer = layer == "project" if layer else args.project is not None
        args.project_dir = os.path.abspath(args.project or os.getcwd())
        handler = _resolve(args.handler)  # the command's modules: imported with the collector still paused
        if collector_paused and not getattr(args, "brief", False):
            # Only a brief command, whose work is small and bounded, ends without it. What start-up made
            # (modules, classes, functions: some 40,000 objects for `attend run`, trio's included) lives
            # until exit: frozen, no collection looks at it again.
            gc.freeze()
            gc.enable()
        code = handler(args)
        if sys.stdout is not None:  # None: attend started with its stdout closed
            sys.stdout.flush()
        return int(code or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`attend sensors | head`, `attend --version | true`); nothing left to say.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence against a traceback
        if os.environ.get("ATTEND_DEBUG"):
            raise
        print(
            f"attend: internal error: {type(exc).__name__}: {exc} (a bug in attend; "
            "set ATTEND_DEBUG=1 to see the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _missing_project(args: argparse.Namespace) -> int:
    """`--project DIR` where DIR is no directory: one line, exit 2 (the Stop hook's drain exits 0)."""
    from attend.text import printable_path

    print(f"attend: the project directory {printable_path(os.path.abspath(args.project))} does not exist "
          "(or is not a directory)", file=sys.stderr)
    if args.command == "drain" and getattr(args, "format", None) in HOOK_FORMATS:
        return EXIT_OK
    return EXIT_USAGE


def _empty_project(args: argparse.Namespace) -> int:
    """`--project ""` (an unset `$CLAUDE_PROJECT_DIR` expanded to nothing): say so, and never block a Stop hook.

    Exit 2 would make Claude Code block the agent with the message, so the hook drain exits 0.
    """
    print(
        "attend: --project is empty (was $CLAUDE_PROJECT_DIR unset?); give a directory, or leave --project "
        "out to use the working directory",
        file=sys.stderr,
    )
    if args.command == "drain" and getattr(args, "format", None) in HOOK_FORMATS:
        return 0
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
