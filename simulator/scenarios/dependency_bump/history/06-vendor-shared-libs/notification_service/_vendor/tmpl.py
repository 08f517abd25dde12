"""tmpl 3.1.0: tiny "{name}" templates for customer messages, with plural and truncation helpers.

Vendored from the messaging-libs repo (libs/tmpl); do not edit here, bump the pin in vendor.txt
and re-vendor.
"""

import re

__version__ = "3.1.0"

_FIELD = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def render(template, params, *, missing="keep"):
    """Fill "{name}" fields from params; missing="keep" leaves unknown fields as written."""

    def fill(match):
        name = match.group(1)
        if name in params:
            return str(params[name])
        if missing == "blank":
            return ""
        return match.group(0)

    return _FIELD.sub(fill, template)


def pluralize(count, singular, plural=None):
    """ "1 order", "3 orders"; plural defaults to singular + "s"."""
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count} {word}"


def truncate(text, width=60, *, ellipsis="..."):
    """Cut text to at most width characters, ending with ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: width - len(ellipsis)].rstrip() + ellipsis
