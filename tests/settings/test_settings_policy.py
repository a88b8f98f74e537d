"""The pure decisions: layers written, overrides, names, management rules (attend.settings.policy)."""

import pytest

from attend.settings.policy import (
    delete_refusal,
    name_problem,
    overriding_layer,
    rename_refusal,
    sets_path,
    target_layer,
)


def test_writes_go_to_the_user_layer_unless_project_is_named():
    assert target_layer(False) == "user"
    assert target_layer(True) == "project"


@pytest.mark.parametrize("name", ["git", "weather-2", "a_b", "0day"])
def test_well_formed_names_are_accepted(name):
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["../x", "x/y", ".hidden", "Upper", "-x", "", "a b", "x.yaml"])
def test_names_that_could_leave_the_folder_or_break_the_rule_are_refused(name):
    assert "not a sensor name" in name_problem(name)


def test_a_path_is_set_by_the_key_itself_or_a_scalar_above_it():
    data = {"triggers": {"t": {"magnitude": 2}}, "requires": ["x"]}
    assert sets_path(data, ("triggers", "t", "magnitude"))
    assert not sets_path(data, ("triggers", "t", "where"))
    assert sets_path(data, ("requires", "0"))


def test_a_higher_layer_that_sets_the_key_overrides_a_user_write():
    stored = {"shipped": {"interval": 60}, "user": {}, "project": {"interval": "5s"}}
    assert overriding_layer(("interval",), "user", stored) == "project"
    assert overriding_layer(("interval",), "project", stored) is None
    assert overriding_layer(("threshold",), "user", stored) is None
    assert overriding_layer(("interval",), "user", {"project": None}) is None


def test_a_shipped_only_sensor_cannot_be_deleted_but_an_override_can():
    assert "shipped sensor" in delete_refusal("git", "user", ("shipped",))
    assert delete_refusal("git", "user", ("shipped", "user")) is None
    assert "no project file" in delete_refusal("git", "project", ("shipped", "user"))


def test_a_shipped_only_sensor_cannot_be_renamed_and_names_are_never_overwritten():
    assert "copied" in rename_refusal("git", "g2", "user", ("shipped",), new_exists=False)
    assert "already exists" in rename_refusal("mine", "git", "user", ("user",), new_exists=True)
    assert rename_refusal("mine", "yours", "user", ("user",), new_exists=False) is None
    assert rename_refusal("git", "g2", "user", ("shipped", "user"), new_exists=False) is None
