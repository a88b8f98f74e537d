"""Which folders `wake_on` watches, and which sensors a change wakes (DESIGN.md, Spec v1: `wake_on`).

Pure decisions, apart from a few `stat`s; the watching itself is runtime/watching/wake.py. No trio here:
`attend explain` shows the resolved watches.

- A pattern is relative to the project, `~` expanded. A plain path to a folder covers everything
  under it; a plain path to anything else (or to nothing yet) watches its parent folder flat and
  wakes on that one name. A glob watches the folder before its first glob part, recursively when
  `**` or a further folder part follows.
- A change is matched against each pattern (wcmatch glob, `**` spanning folders, dot files matched),
  never against the folder's other files: watching `data.json` ignores its neighbours.
- A path that does not exist yet is watched through its nearest existing ancestor (flat); a change
  on the way to it re-plans the watches and wakes the sensor (a `git init`, a folder created later).
- `wake_on` set by a project file watches only inside the project (`inside_project`, symlinks
  resolved): the project layer tunes without trust, and a cloned repository must not make the daemon
  walk `~` or `/`, directly or through a symlink it ships.
- A watch never goes through a symbolic link to a folder inside the tree it watches: watchfiles (the
  `notify` crate) follows such links when it watches a tree (inotify at the start, its polling on every
  scan), so `wake_on: ["**"]` in a checkout holding `root -> /` would watch the whole disk. Planning walks
  each recursive base without following links (`tree_without_links`): a folder that holds a link to a
  folder is watched flat (the link itself is one of its entries, never entered) and its real subfolders
  recursively. Every change is checked again (`WatchPlan.woken`): a change whose folder, links resolved,
  lies outside the target's base (seen through a link) wakes nobody and plans again, and so does a link
  to a folder made or swapped in after planning, so the next plan leaves it out; a link that leads out of
  the base is not a change of the base either (its target's changes would be).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PROJECT_OUTSIDE", "WatchPlan", "WatchTarget", "escape_glob", "inside_project", "plan_watches", "reload_targets",
           "store_targets", "tree_without_links", "watch_target"]

#: Why a project file's `wake_on` entry outside the project is not watched.
PROJECT_OUTSIDE = ("outside the project: a project file's wake_on watches only the project (a checkout must "
                   "not make the daemon watch the home folder or the disk); set it in the user layer")

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class WatchTarget:
    """One resolved `wake_on` entry: the folder to watch, how deep, and the glob a change must match."""

    pattern: str  # as the file wrote it
    base: Path  # the folder to watch
    recursive: bool
    glob: str  # absolute glob a changed path must match


def _split(pattern: str, project_dir: Path, home: str | None) -> tuple[Path, tuple[str, ...]]:
    """The literal folder a pattern starts from (the project, the home, or `/`) and its own parts.

    Only the parts the file wrote can hold glob characters: a project folder named `a[1]` is a name.
    """
    if pattern == "~" or pattern.startswith("~/"):
        prefix, rest = Path(home or os.path.expanduser("~")), pattern[2:]
    elif pattern.startswith("/"):
        prefix, rest = Path("/"), pattern.lstrip("/")
    else:
        prefix, rest = project_dir, pattern
    rest = os.path.normpath(rest) if rest else "."
    if rest.startswith(".."):  # climbing out of the prefix: fold the climb into the literal folder
        ups = [p for p in rest.split("/") if p == ".."]
        prefix = Path(os.path.normpath(prefix.joinpath(*ups)))
        rest = os.path.normpath(rest[3 * len(ups):] or ".")
    return Path(os.path.normpath(prefix)), tuple(p for p in rest.split("/") if p not in ("", "."))


def watch_target(pattern: str, project_dir: Path, *, home: str | None = None) -> WatchTarget:
    """Resolve one `wake_on` entry (relative to `project_dir`, `~` expanded with `home`) to what to watch."""
    prefix, parts = _split(pattern, Path(project_dir), home)
    first_glob = next((i for i, part in enumerate(parts) if _GLOB_CHARS & set(part)), None)
    if first_glob is None:
        path = prefix.joinpath(*parts)
        if path.is_dir():
            return WatchTarget(pattern, path, True, escape_glob(str(path)) + "/**")
        return WatchTarget(pattern, path.parent, False, escape_glob(str(path)))
    base = prefix.joinpath(*parts[:first_glob])
    rest = parts[first_glob:]
    recursive = len(rest) > 1 or "**" in rest[0]
    return WatchTarget(pattern, base, recursive, escape_glob(str(base)).rstrip("/") + "/" + "/".join(rest))


def inside_project(target: WatchTarget, project_dir: Path) -> bool:
    """Whether `target` watches inside `project_dir` (what a project file's `wake_on` may do).

    Symlinks are resolved first, in the target and in the project: `escape/**` with `escape → /outside`
    watches `/outside`, so it is refused like `../**`.
    """
    return Path(os.path.realpath(target.base)).is_relative_to(os.path.realpath(project_dir))


def escape_glob(text: str) -> str:
    """`text` as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in _GLOB_CHARS else c for c in text)


def _existing_ancestor(path: Path) -> Path:
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


@dataclass(slots=True)
class WatchPlan:
    """What the watchers watch for the current set of sensors, and who each change wakes."""

    flat: set[Path] = field(default_factory=set)
    recursive: set[Path] = field(default_factory=set)
    #: sensor → its targets
    targets: dict[str, tuple[WatchTarget, ...]] = field(default_factory=dict)
    #: a base that does not exist yet → the ancestor watched in its place
    missing: dict[Path, Path] = field(default_factory=dict)
    _matchers: dict[str, Callable[[str], bool]] = field(default_factory=dict)
    #: each watched folder → the base it was planned for (itself, unless a base's tree was split)
    origin: dict[Path, Path] = field(default_factory=dict)
    #: the folders watched flat because they hold a link to a folder (a new folder in one plans again)
    split: set[Path] = field(default_factory=set)
    #: each target's base with its links resolved: what a change must stay inside
    _real: dict[Path, str] = field(default_factory=dict)

    def bases(self, folders: Iterable[Path]) -> list[Path]:
        """The bases `folders` were planned for (what a message about them names), in order."""
        return sorted({self.origin.get(folder, folder) for folder in folders})

    def woken(self, changed: Iterable[str]) -> tuple[set[str], bool]:
        """The sensors a set of changed paths wakes, and whether the watches must be planned again.

        A change to a path on the way to a missing base (the folder it needs being created) wakes the
        sensor and re-plans; a change that matches a target's glob wakes its sensor when it happened inside
        the target's base (its folder resolved; a link leading out of the base is not inside it). A match
        outside (seen through a link), a link to a folder among the changes and a folder made in a folder
        watched flat for its links re-plan (module docstring).
        """
        changed = [os.path.normpath(p) for p in changed]
        places: dict[str, tuple[str, str | None]] = {}
        woken: set[str] = set()
        split = {str(folder) for folder in self.split}
        # a link to a folder made (or swapped in) since planning, or a folder made where the plan watches flat
        replan = any(_folder_link(p) or (os.path.dirname(p) in split and os.path.isdir(p)) for p in changed)
        for name, targets in self.targets.items():
            for target in targets:
                if target.base in self.missing and any(_on_the_way(p, target.base) for p in changed):
                    woken.add(name)
                    replan = True
                    break
                matched = [p for p in changed if self._match(target.glob, p)]
                if not matched:
                    continue
                root = self._root(target.base)
                inside = [p for p in matched if _inside(_place(p, places), root)]
                # seen through a link (its folder is outside): the watch goes through one; plan again
                replan = replan or any(not _inside((_place(p, places)[0], None), root) for p in matched)
                if inside:
                    woken.add(name)
                    break
        return woken, replan

    def _root(self, base: Path) -> str:
        root = self._real.get(base)
        if root is None:
            root = self._real[base] = os.path.realpath(base)
        return root

    def _match(self, glob: str, path: str) -> bool:
        matcher = self._matchers.get(glob)
        if matcher is None:
            from wcmatch import glob as wcglob

            compiled = wcglob.compile(glob, flags=wcglob.GLOBSTAR | wcglob.DOTGLOB)
            matcher = self._matchers[glob] = compiled.match
        return matcher(path)


def _folder_link(path: str) -> bool:
    """`path` is a symbolic link to a folder (a tree watch must not enter it)."""
    return os.path.islink(path) and os.path.isdir(path)


def _place(path: str, places: dict[str, tuple[str, str | None]]) -> tuple[str, str | None]:
    """Where a change happened, links resolved: its folder's real path, and where it leads when it is a link."""
    place = places.get(path)
    if place is None:
        folder = os.path.realpath(os.path.dirname(path))
        place = places[path] = (folder, os.path.realpath(path) if os.path.islink(path) else None)
    return place


def _inside(place: tuple[str, str | None], root: str) -> bool:
    """A change at `place` (`_place`) happened inside the folder `root` (a real path)."""
    folder, leads_to = place
    return all(p == root or p.startswith(root.rstrip("/") + "/") for p in (folder, leads_to) if p is not None)


def tree_without_links(base: Path) -> tuple[set[Path], set[Path]]:
    """How to watch the tree under `base` without entering a symbolic link to a folder: (the folders to watch
    recursively, those to watch flat). Walks the tree once, following no link: the folders holding a link to
    a folder, and their ancestors up to `base`, are watched flat, each of their real subfolders that holds no
    such link below it recursively (`{base}` alone when the tree holds none)."""
    holding: set[str] = set()
    stack = [str(base)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_symlink():
                            if entry.is_dir():  # follows the link: one to a folder
                                holding.add(folder)
                        elif entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                    except OSError:  # gone while walked: the next plan sees what is there
                        continue
        except OSError:  # unreadable or gone: watchfiles says so when it watches it
            continue
    if not holding:
        return {base}, set()
    flat: set[Path] = set()
    for holder in holding:
        up = Path(holder)
        while up not in flat:
            flat.add(up)
            if up == base or up == up.parent:
                break
            up = up.parent
    recursive: set[Path] = set()
    for kept in flat:
        try:
            with os.scandir(kept) as entries:
                recursive |= {Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)} - flat
        except OSError:
            continue
    return recursive, flat


def _on_the_way(changed: str, base: Path) -> bool:
    """`changed` is `base` or one of its ancestors (the path `base` needs is being made)."""
    text = str(base)
    return text == changed or text.startswith(changed.rstrip("/") + "/")


def plan_watches(targets: Mapping[str, Iterable[WatchTarget]]) -> WatchPlan:
    """The folders to watch, flat and recursive, for every sensor's targets.

    A recursive base is split where it holds links to folders (`tree_without_links`: a watch never goes
    through one). A recursive folder inside another recursive one is dropped (its parent covers it), and so
    is a flat one inside a recursive one. A base that does not exist is replaced by its nearest existing
    ancestor, watched flat. Walks every recursive base: run it off the event loop.
    """
    plan = WatchPlan(targets={name: tuple(ts) for name, ts in targets.items()})
    trees: dict[Path, tuple[set[Path], set[Path]]] = {}
    for ts in plan.targets.values():
        for t in ts:
            if t.base.is_dir() and t.recursive:
                if t.base not in trees:
                    trees[t.base] = tree_without_links(t.base)
                recursive, flat = trees[t.base]
                plan.recursive |= recursive
                plan.flat |= flat
                plan.split |= flat
                for folder in recursive | flat:
                    plan.origin.setdefault(folder, t.base)
            elif t.base.is_dir():
                plan.flat.add(t.base)
                plan.origin.setdefault(t.base, t.base)
            else:
                ancestor = _existing_ancestor(t.base)
                plan.missing[t.base] = ancestor
                plan.flat.add(ancestor)
                plan.origin.setdefault(ancestor, ancestor)
    # by ancestors, not pairs: a split tree can be thousands of folders
    recursive = plan.recursive
    plan.recursive = {d for d in recursive if not any(up in recursive for up in d.parents)}
    plan.flat = {d for d in plan.flat if d not in plan.recursive and not any(up in plan.recursive for up in d.parents)}
    return plan


def reload_targets(folders: Iterable[Path], files: Iterable[Path] = ()) -> list[WatchTarget]:
    """The `*.yaml` files directly in each of `folders`, and each of `files`."""
    targets = [WatchTarget(f"{folder}/*.yaml", Path(folder), False, escape_glob(str(folder)).rstrip("/") + "/*.yaml")
               for folder in folders]
    targets += [WatchTarget(str(file), Path(file).parent, False, escape_glob(str(file))) for file in files]
    return targets


def store_targets(db: Path) -> list[WatchTarget]:
    """The store's files (the database, its `-wal` a commit writes, its `-journal`), for a reader that
    shows the store (the sensors tab): it reads again when another process committed."""
    return [WatchTarget(f"{db}*", Path(db).parent, False, escape_glob(str(db)) + "*")]
