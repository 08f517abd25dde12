"""isotime 1.2.0: ISO-8601 times to and from epoch seconds, without the datetime module.

Vendored from the platform-libs repo (libs/isotime); do not edit here, bump the pin in
vendor.txt and re-vendor.
"""

__version__ = "1.2.0"


def _days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def parse_ts(text):
    """Epoch seconds of "2026-03-01T10:00:00Z", "...+02:00", a naive time (UTC) or a date."""
    text = text.strip()
    if len(text) == 10:
        text += "T00:00:00"
    date, _, rest = text.partition("T")
    clock, offset = rest[:8], rest[8:]
    y, m, d = (int(p) for p in date.split("-"))
    hh, mm, ss = (int(p) for p in clock.split(":"))
    shift = 0
    if offset and offset != "Z":
        oh, om = (int(p) for p in offset[1:].split(":"))
        shift = (oh * 3600 + om * 60) * (-1 if offset[0] == "-" else 1)
    return _days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss - shift


def format_ts(epoch, *, with_z=True):
    """ISO-8601 text of epoch seconds in UTC; with_z=False leaves the "Z" off."""
    days, secs = divmod(int(epoch), 86400)
    y, m, d = _civil_from_days(days)
    hh, rest = divmod(secs, 3600)
    text = f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return text + "Z" if with_z else text
