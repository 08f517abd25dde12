"""Last-click attribution of conversions to ad clicks inside the attribution window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from ad_ranking import config
from capi_pipeline import ConversionEvent


@dataclass(frozen=True, slots=True)
class Click:
    """One ad click, as logged by the ads frontend."""

    click_id: str
    ad_id: str
    click_time: int
    """Epoch seconds (UTC)."""


def _attributed(
    clicks: Iterable[Click], conversions: Iterable[ConversionEvent], window_seconds: int
) -> Iterator[tuple[Click, ConversionEvent]]:
    """(click, conversion) for every conversion the attribution rules credit to a click."""
    clicks_by_id = {click.click_id: click for click in clicks}
    for conversion in conversions:
        click = clicks_by_id.get(conversion.click_id or "")
        if click is None:
            continue
        delay = conversion.event_time - click.click_time
        if 0 <= delay <= window_seconds:
            yield click, conversion


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
    counts: dict[str, int] = {}
    for click, _ in _attributed(clicks, conversions, window_seconds):
        counts[click.ad_id] = counts.get(click.ad_id, 0) + 1
    return counts


def attribution_breakdown(
    clicks: Iterable[Click],
    conversions: Iterable[ConversionEvent],
    window_seconds: int = config.ATTRIBUTION_WINDOW_SECONDS,
) -> dict[tuple[str, str], int]:
    """Attributed conversions per (ad id, event name), for the Ads Manager report.

    Same rules as attribute_conversions(); the counts of one ad add up to its total there.
    """
    counts: dict[tuple[str, str], int] = {}
    for click, conversion in _attributed(clicks, conversions, window_seconds):
        key = (click.ad_id, conversion.event_name)
        counts[key] = counts.get(key, 0) + 1
    return counts
