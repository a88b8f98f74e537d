"""`attend compile --check` against the corpus in tests/data/spec: golden output for every spec diagnostic code.

Each `cases/<name>.yaml` is checked on its own (as a standalone file) and its text output compared with
`golden/<name>.txt`; each `homes/<case>/` is an XDG home (`config/`) plus a project (`project/`)
checked with no path, output compared with `golden/home-<case>.txt` (the home's path shown as
`<home>`). Set ATTEND_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from attend.commands.check import run
from attend.errors import CODES
from attend.spec.loading import MAX_FILE_BYTES

DATA = Path(__file__).parent.parent / "data" / "spec"
GOLDEN = DATA / "golden"
UPDATE = os.environ.get("ATTEND_UPDATE_GOLDEN") == "1"

#: Every code attend.spec emits; each must show up in some golden file.
SPEC_CODES = (
    "io", "encoding", "file-too-large", "yaml-syntax", "duplicate-key", "alias-limit", "too-deep",
    "not-a-mapping", "spec-version", "unknown-field", "wrong-type", "bad-value", "required", "bad-name",
    "bad-duration", "interval-order", "kind-block-missing", "kind-block-mismatch", "on-rules", "lane-author",
    "supersedes",
    "project-refused", "legacy-key", "layer-override", "untrusted-key", "ignored-file", "bad-number",
)
#: Cases made at test time rather than stored: a file over the size limit, and a path that is not there.
GENERATED = ("file-too-large", "missing")


def xdg_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_STATE_HOME=str(home / "state"))
    return env


def check_text(paths: list[str], project: Path, env: dict[str, str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(paths, str(project), env=env, out=out, err=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue()


def compare(name: str, text: str) -> None:
    golden = GOLDEN / f"{name}.txt"
    if UPDATE:
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden}; run with ATTEND_UPDATE_GOLDEN=1"
    assert text == golden.read_text()


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus copied to a temporary folder (the working directory), with the generated cases."""
    shutil.copytree(DATA / "cases", tmp_path / "cases")
    shutil.copytree(DATA / "valid", tmp_path / "valid")
    (tmp_path / "cases" / "file-too-large.yaml").write_bytes(b"spec: 1\n# " + b"x" * MAX_FILE_BYTES + b"\n")
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


CASES = sorted(p.stem for p in (DATA / "cases").glob("*.yaml")) + list(GENERATED)


@pytest.mark.parametrize("name", CASES)
def test_each_invalid_case_gives_its_golden_positioned_diagnostics_and_exit_1(corpus: Path, name: str) -> None:
    code, text = check_text([f"cases/{name}.yaml"], corpus / "home", xdg_env(corpus / "home"))
    compare(name, text)
    assert code == 1
    assert text.startswith(f"cases/{name}.yaml:")


@pytest.mark.parametrize("name", sorted(p.stem for p in (DATA / "valid").glob("*.yaml")))
def test_each_valid_file_checks_clean(corpus: Path, name: str) -> None:
    assert check_text([f"valid/{name}.yaml"], corpus / "home", xdg_env(corpus / "home")) == (0, "")


def test_checking_the_whole_folder_reports_every_file_problems_and_loses_none(corpus: Path) -> None:
    code, text = check_text(["cases", "valid"], corpus / "home", xdg_env(corpus / "home"))
    assert code == 1
    expected = "".join((GOLDEN / f"{name}.txt").read_text() for name in CASES if name != "missing")
    assert sorted(text.splitlines()) == sorted(expected.splitlines())


def run_home(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    home = tmp_path / case
    shutil.copytree(DATA / "homes" / case, home)
    config = home / "config" / "attend" / "config.yaml"
    if config.exists():
        config.write_text(config.read_text().replace("@PROJECT@", str(home / "project")))
    monkeypatch.setenv("HOME", str(home))
    code, text = check_text([], home / "project", xdg_env(home))
    root = str(home)
    kept, keep = [], False
    for line in text.splitlines():
        if not line.startswith("    "):
            keep = line.startswith(root)
        if keep:
            kept.append(line.replace(root, "<home>"))
    return code, "".join(line + "\n" for line in kept)


def test_an_untrusted_home_reports_refusals_old_keys_and_orphan_overrides(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    code, text = run_home("untrusted", tmp_path, monkeypatch)
    compare("home-untrusted", text)
    assert code == 1  # the orphan override is an error; refusals and old keys are warnings


def test_a_trusted_project_may_define_command_sensors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, text = run_home("trusted", tmp_path, monkeypatch)
    compare("home-trusted", text)
    assert "project-refused" not in text and "[interval-order]" in text
    assert code == 1


def test_the_golden_corpus_covers_every_spec_diagnostic_code() -> None:
    seen = "".join(p.read_text() for p in GOLDEN.glob("*.txt"))
    missing = [code for code in SPEC_CODES if f"[{code}]" not in seen]
    assert missing == []
    assert set(SPEC_CODES) <= set(CODES)


def test_every_spec_code_is_documented_with_an_example() -> None:
    text = (Path(__file__).parent.parent.parent / "docs" / "diagnostics.md").read_text()
    undocumented = [code for code in SPEC_CODES if f"### `{code}`" not in text or f"[{code}]" not in text]
    assert undocumented == []
