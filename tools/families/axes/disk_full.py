"""disk-full's axes: the `site` tables, from the courier platform's data (see ..courier)."""

from __future__ import annotations

from ..courier import family_axes


def axes() -> str:
    """The `site` axis."""
    return family_axes("disk_full")
