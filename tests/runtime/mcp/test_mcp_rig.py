"""The MCP tests' rig (mcp_rig.py): what stands behind the test servers."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_rig import Behind


def test_a_server_reading_the_items_never_sees_them_half_written(tmp_path: Path) -> None:
    # The servers read the items file whenever they like (resources.py every 20 ms): a file truncated and then
    # written is empty for a moment, and its JSON fails to parse in the server (which then answers an error,
    # or never answers, or stops publishing). `write_items` replaces the file whole: a reader that opened the
    # file before the write reads all of what was there, never a truncated file.
    behind = Behind(tmp_path / "items.json", tmp_path / "starts.txt", tmp_path / "crash-now")
    behind.write_items([{"id": "a", "title": "first"}])
    with open(behind.items_file, encoding="utf-8") as reader:
        behind.write_items([{"id": "b", "title": "second"}])
        assert json.loads(reader.read()) == [{"id": "a", "title": "first"}]
    assert json.loads(behind.items_file.read_text(encoding="utf-8")) == [{"id": "b", "title": "second"}]
