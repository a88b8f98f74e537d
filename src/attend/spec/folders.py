"""Where each layer's files and the state folder are, from the XDG variables (ADR-403 §2).

A module of its own, light to import: the hooks (commands/drain.py) and the run lock need the state
folder without loading sensors (spec/layers.py re-exports `layer_paths`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from attend.files import state_folder, xdg_home
from attend.spec.loaded import LayerPaths

__all__ = ["layer_paths"]


def layer_paths(project_dir: str | Path, env: Mapping[str, str] | None = None) -> LayerPaths:
    """The folders and files each layer reads, from the XDG variables (with their defaults) and the project.

    Args:
        project_dir: the project directory (`--project DIR`, else the working directory).
        env: the environment to read XDG variables from (default `os.environ`).
    """
    env = os.environ if env is None else env
    config = xdg_home(env, "XDG_CONFIG_HOME")
    data = xdg_home(env, "XDG_DATA_HOME")
    project = Path(project_dir).absolute()
    return LayerPaths(
        shipped=Path(__file__).resolve().parent.parent / "sensors.d",
        shipped_projection=data / "agent-ways" / "attend" / "sensors",
        user=config / "attend" / "sensors",
        project=project / ".claude" / "attend" / "sensors",
        project_dir=project,
        config_file=config / "attend" / "config.yaml",
        project_config_file=project / ".claude" / "attend.yaml",
        state_dir=state_folder(env),
    )
