"""Peers across machines without a server: the settings (secrets never shown, user config only), the machine
id and a project's identity (peers/machine.py), and the transport chosen from them (peers/transport.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attend.peers.machine import machine_id, normalise_remote, project_identity
from attend.peers.transport import open_mailbox, peers_settings


def test_a_token_or_password_is_never_shown_by_settings_set_get_or_list(home) -> None:
    for key, value in (("token", "s3cret-tok3n"), ("password", "hunter two")):
        done = home.attend("settings", "set", f"attend.peers.nats.{key}", value)
        assert done.returncode == 0, done.stderr
        assert value not in done.stdout and f"<hidden: {len(value)} characters>" in done.stdout
    home.attend("settings", "set", "attend.peers.nats.user", "ada")
    shown = [home.attend("settings", "get", "attend.peers.nats.token").stdout,
             home.attend("settings", "get", "attend.peers.nats.password", "--json").stdout,
             home.attend("settings", "get", "attend.peers").stdout,
             home.attend("settings", "get", "attend.peers.nats", "--json").stdout,
             home.attend("settings", "list").stdout,
             home.attend("settings", "list", "--json").stdout,
             home.attend("settings", "set", "attend.peers.nats.token", "s3cret-tok3n", "--json").stdout]
    for text in shown:
        assert "s3cret" not in text and "hunter" not in text, text
    assert "ada" in home.attend("settings", "get", "attend.peers.nats.user").stdout  # not a secret
    assert "s3cret-tok3n" in home.config_file.read_text()  # stored as written: only its display is hidden


def test_a_secret_written_as_an_environment_reference_is_shown_as_written(home) -> None:
    home.attend("settings", "set", "attend.peers.nats.token", "${NATS_TOKEN}")
    assert home.attend("settings", "get", "attend.peers.nats.token").stdout.splitlines()[0] == "${NATS_TOKEN}"


def test_a_server_url_holding_a_user_or_token_is_refused_without_repeating_it(home) -> None:
    done = home.attend("settings", "set", "attend.peers.nats.url", "nats://ada:s3cret@example.org:4222")
    assert done.returncode != 0
    assert "s3cret" not in done.stdout + done.stderr and "attend.peers.nats.user" in done.stderr
    assert home.attend("settings", "set", "attend.peers.nats.url", "[nats://a:4222, tls://b:4222]").returncode == 0
    assert peers_settings(home.env()).transport == "files"  # the url alone chooses no transport
    home.attend("settings", "set", "attend.peers.transport", "nats")
    assert peers_settings(home.env()).nats.urls == ("nats://a:4222", "tls://b:4222")


def test_a_project_file_cannot_choose_the_peers_server(home) -> None:
    project_file = home.project / ".claude" / "attend.yaml"
    project_file.parent.mkdir(parents=True)
    project_file.write_text("peers:\n  transport: nats\n  nats:\n    url: nats://attacker.example:4222\n")
    assert peers_settings(home.env()).transport == "files"
    assert open_mailbox(home.env()).transport == "files"
    check = home.attend("compile", "--check")
    assert "untrusted-key" in check.stdout and "peers in a project file is ignored" in check.stdout
    refused = home.attend("settings", "set", "--layer", "project", "attend.peers.transport", "nats")
    assert refused.returncode != 0 and "only in the user layer" in refused.stderr


@pytest.mark.parametrize(("url", "identity"), [
    ("git@github.com:ada/api.git", "github.com/ada/api"),
    ("https://github.com/ada/api", "github.com/ada/api"),
    ("https://ada:ghp_token@GitHub.com/ada/api.git/", "github.com/ada/api"),
    ("ssh://git@github.com:22/ada/api.git", "github.com/ada/api"),
    ("/srv/git/api.git", "/srv/git/api"),
])
def test_a_git_remote_names_the_project_the_same_whichever_way_it_was_cloned(url, identity) -> None:
    assert normalise_remote(url) == identity


def test_a_project_is_its_remote_and_its_path_in_the_repository_else_its_path_on_this_machine(home, tmp_path) -> None:
    repo = tmp_path / "mono"
    (repo / "services" / "api").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:ada/mono.git"], check=True)
    assert project_identity(repo, home.env()) == "github.com/ada/mono"
    assert project_identity(repo / "services" / "api", home.env()) == "github.com/ada/mono//services/api"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_identity(plain, home.env()) == f"{machine_id(home.env())}:{plain.resolve()}"


def test_the_git_that_reads_a_projects_remote_runs_in_the_environment_it_is_given(home, tmp_path) -> None:
    # The git found on the given environment's PATH answers, not the one on this process's.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text(f"#!{sys.executable}\nimport sys\nargs = sys.argv[3:]\n"
                   "print({'remote': 'origin', 'config': 'git@example.org:ada/stated.git'}.get(args[0], ''))\n")
    git.chmod(0o755)
    folder = tmp_path / "anywhere"
    folder.mkdir()
    assert project_identity(folder, {**home.env(), "PATH": str(bin_dir)}) == "example.org/ada/stated"


def test_each_home_is_a_machine_of_its_own_and_keeps_its_id(home, tmp_path) -> None:
    first = machine_id(home.env())
    assert machine_id(home.env()) == first
    other = {**home.env(), "XDG_STATE_HOME": str(tmp_path / "other-state")}
    assert machine_id(other) != first
    assert json.dumps(first).strip('"') == first  # plain letters, digits and dashes: it names a consumer
