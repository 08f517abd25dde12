"""user-service account activity: the "member since / last seen" panel of the profile page.

Signup dates are stored as dates, sign-in events as naive UTC times from the auth log.
"""

from user_service._vendor import isotime


def activity_panel(signup_day, sign_ins, now):
    """Days since signup, the last sign-in (naive UTC text) and sign-ins in the last 7 days."""
    current = isotime.parse_ts(now)
    seen = sorted(isotime.parse_ts(s) for s in sign_ins)
    return {
        "member_days": (current - isotime.parse_ts(signup_day)) // 86400,
        "last_seen": isotime.format_ts(seen[-1], with_z=False) if seen else None,
        "recent_sign_ins": sum(1 for t in seen if current - t <= 7 * 86400),
    }
