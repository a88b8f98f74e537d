"""`wake_on` is a settings key like every field: set, validated, read back, and in the JSON Schema."""

from __future__ import annotations

import json


def test_wake_on_is_set_per_sensor_and_an_empty_entry_is_refused_without_writing(home) -> None:
    done = home.attend("settings", "set", "attend.sensors.git.wake_on", "[docs/**, notes.md]")
    assert done.returncode == 0, done.stderr
    got = json.loads(home.attend("settings", "get", "attend.sensors.git.wake_on", "--json").stdout)
    assert (got["value"], got["default"], got["layer"]) == (["docs/**", "notes.md"], [], "user")
    written = (home.user_sensors / "git.yaml").read_bytes()
    refused = home.attend("settings", "set", "attend.sensors.git.wake_on", '[""]')
    assert refused.returncode == 3 and "wake_on.0" in refused.stderr
    assert (home.user_sensors / "git.yaml").read_bytes() == written


def test_the_json_schema_describes_wake_on_as_a_list_of_paths(home) -> None:
    schema = json.loads(home.attend("spec", "schema").stdout)
    assert schema["properties"]["wake_on"]["type"] == "array"
    assert schema["properties"]["wake_on"]["items"]["type"] == "string"
