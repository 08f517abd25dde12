"""Live config over the defaults."""

from courier_common.settings import effective


def test_pushed_values_win_over_defaults():
    assert effective({"a": 1, "b": "x"}, {"a": 5}) == {"a": 5, "b": "x"}


def test_a_push_cannot_invent_keys_or_change_types():
    assert effective({"a": 1}, {"z": 2, "a": "5"}) == {"a": 1}
