"""order-service delivery promise: when an order ships and arrives.

Warehouse clocks write naive UTC times ("2026-03-01T16:20:00"); the carrier cut-off calendar
gives dates. Orders placed before the day's cut-off hour ship that day, later ones the next.
"""

from order_service._vendor import isotime

CUTOFF_HOUR = 15


def delivery_window(placed_at, cutoff_day, transit_days):
    """Ship and arrival times (naive UTC text, as the storefront expects) of one order."""
    placed = isotime.parse_ts(placed_at)
    cutoff = isotime.parse_ts(cutoff_day) + CUTOFF_HOUR * 3600
    ships = placed if placed < cutoff else cutoff + 86400
    return {
        "ships": isotime.format_ts(ships, with_z=False),
        "arrives": isotime.format_ts(ships + transit_days * 86400, with_z=False),
        "missed_cutoff": placed >= cutoff,
    }
