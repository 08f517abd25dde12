"""Reading a service's settings: the live config over the reviewed defaults."""

from __future__ import annotations


def effective(defaults: dict, live: dict) -> dict:
    """The settings a service runs with: `live` (pushed values) over `defaults`.

    A live key that the defaults do not know is ignored: a push cannot invent settings.
    """
    merged = dict(defaults)
    for key, value in live.items():
        if key in merged and type(value) is type(merged[key]):
            merged[key] = value
    return merged
