"""auth-service session lifetimes: when a session must re-authenticate.

Sessions expire after SESSION_HOURS, and never outlive the day a password policy takes
effect (policy days come from the security calendar as dates; issue times are naive UTC).
"""

from auth_service._vendor import isotime

SESSION_HOURS = 12


def session_expiry(issued_at, policy_day=None):
    """The re-authentication time of a session (naive UTC text) and what decided it."""
    issued = isotime.parse_ts(issued_at)
    expires = issued + SESSION_HOURS * 3600
    reason = "lifetime"
    if policy_day is not None:
        policy = isotime.parse_ts(policy_day)
        if issued < policy < expires:
            expires, reason = policy, "password_policy"
    return {"expires": isotime.format_ts(expires, with_z=False), "reason": reason}
