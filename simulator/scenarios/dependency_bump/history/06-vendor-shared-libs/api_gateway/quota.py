"""api-gateway partner quotas: the daily window a partner's request counts against.

Partners send their own request time in X-Request-Time (ISO-8601 with an offset); quotas reset
at midnight UTC, and the window is echoed back in the X-Quota-Window header.
"""

from api_gateway._vendor import isotime

DAY = 86400


def quota_window(request_time):
    """The UTC day window (start and end as ISO text) that a partner request counts against."""
    at = isotime.parse_ts(request_time)
    start = at - at % DAY
    return {"start": isotime.format_ts(start), "end": isotime.format_ts(start + DAY)}
