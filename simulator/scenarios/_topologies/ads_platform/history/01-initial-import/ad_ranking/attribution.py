"""Last-click attribution of conversions to ad clicks inside the attribution window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ad_ranking import config
from capi_pipeline import ConversionEvent


@dataclass(frozen=True, slots=True)
class Click:
    """One ad click, as logged by the ads frontend."""

    click_id: str
    ad_id: str
    click_time: int
    """Epoch seconds (UTC)."""


def attribute_conversions(
    clicks: Iterable[Click],
    conversions: Iterable[ConversionEvent],
    window_seconds: int = config.ATTRIBUTION_WINDOW_SECONDS,
) -> dict[str, int]:
    """Count attributed conversions per ad id.

    A conversion is attributed to the click it names when it happened no earlier than the
    click and at most `window_seconds` after it. Conversions without a click id, naming an
    unknown click, or outside the window are not attributed to any ad.
    """
    clicks_by_id = {click.click_id: click for click in clicks}
    counts: dict[str, int] = {}
    for conversion in conversions:
        click = clicks_by_id.get(conversion.click_id or "")
        if click is None:
            continue
        delay = conversion.event_time - click.click_time
        if 0 <= delay <= window_seconds:
            counts[click.ad_id] = counts.get(click.ad_id, 0) + 1
    return counts
