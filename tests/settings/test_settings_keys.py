"""Settings key paths: parsing, quoting and printing (attend.settings.keys)."""

import pytest

from attend.settings.keys import Key, KeySyntaxError, format_key, parse_key, split_segments, suggest


def test_a_deep_sensor_key_splits_into_sensor_name_and_field_path():
    key = parse_key("attend.sensors.weather.triggers.high-wind.where.wind_speed_10m.above")
    assert key == Key("sensor", ("triggers", "high-wind", "where", "wind_speed_10m", "above"), "weather")


def test_plain_segments_keep_dashes_stars_and_brackets():
    key = parse_key("attend.sensors.w.triggers.a-b*.where.wind_[0-9]?.above")
    assert key.path == ("triggers", "a-b*", "where", "wind_[0-9]?", "above")


def test_a_quoted_segment_may_hold_dots_and_escaped_quotes():
    key = parse_key('attend.sensors.x.triggers.t.where."a.b".above')
    assert key.path == ("triggers", "t", "where", "a.b", "above")
    assert split_segments(r'"say \"hi\"".x') == ['say "hi"', "x"]
    assert split_segments(r'"back\\slash"') == ["back\\slash"]


@pytest.mark.parametrize(
    "segments",
    [
        ("attend", "sensors", "x", "where", "a.b"),
        ("attend", "sensors", "x", 'quote"d'),
        ("attend", "sensors", "x", " padded "),
        ("attend", "sensors", "x", "back\\slash.dot"),
        ("attend", "sensors", "x", "wind_*", "above"),
    ],
)
def test_formatting_then_parsing_gives_back_the_same_segments(segments):
    assert split_segments(format_key(segments)) == list(segments)


def test_a_key_prints_back_in_its_canonical_form():
    text = 'attend.sensors.x.triggers.t.where."a.b".above'
    assert str(parse_key(text)) == text
    assert str(parse_key("attend.engagement.half_life")) == "attend.engagement.half_life"


def test_config_keys_keep_their_section_in_the_path():
    assert parse_key("attend.project_sensors") == Key("config", ("project_sensors",))
    assert parse_key("attend.governor.event.min_gap") == Key("config", ("governor", "event", "min_gap"))


def test_a_whole_sensor_is_a_key_with_an_empty_field_path():
    assert parse_key("attend.sensors.git") == Key("sensor", (), "git")


@pytest.mark.parametrize(
    ("text", "fragment", "column"),
    [
        ("", "empty", 1),
        ("attend..x", "empty segment", 8),
        ("attend.sensors.x.", "empty segment", 17),
        ('attend.sensors."x', "not closed", 16),
        ('attend.sensors."x"y', "followed by", 19),
        ('attend.sensors.a"b', "quote the whole segment", 17),
        (r'attend.sensors."a\n"', "escaped", 18),
        ("sensors.git.interval", "did you mean attend.sensors.git.interval", 1),
        ("attend", "alone is not a key", 1),
        ("attend.sensors", "name a sensor", 14),
        ("attend.sensor.git", "did you mean attend.sensors", 8),
    ],
)
def test_malformed_keys_are_refused_with_a_reason_and_column(text, fragment, column):
    with pytest.raises(KeySyntaxError) as caught:
        parse_key(text)
    assert fragment in caught.value.message
    assert caught.value.column == column


def test_suggestions_rank_the_closest_name_first():
    assert suggest("intervl", ["interval", "min_interval", "threshold"])[0] == "interval"
    assert suggest("zzz", ["interval", "threshold"]) == []
