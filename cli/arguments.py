"""Argument types and the help format every `metasre` subcommand shares.

Type functions raise `argparse.ArgumentTypeError` with the whole message, so argparse prints
`argument --seeds: ...` rather than naming the function (`invalid _positive value`).
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from typing import Any

from ..agents.seeds import parse_seeds
from ..agents.seeds import seeds_text as seeds_text  # re-exported beside seed_list


def seed_list(text: str) -> list[int]:
    """The seeds of `7`, `0-99`, `1,5,9` or `0-4,10`, in order, each once (`parse_seeds`).

    Raises:
        argparse.ArgumentTypeError: the text names no seed, or something that is not one.
    """
    try:
        return parse_seeds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _whole_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        expected = f"expected a whole number >= {minimum}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{expected}, got {value}")
        return value

    return parse


positive_int = _whole_at_least(1)
"""An integer of at least 1."""
non_negative_int = _whole_at_least(0)
"""An integer of at least 0."""


def port_number(text: str) -> int:
    """A TCP port to listen on: 0-65535, 0 meaning any free one."""
    expected = "expected a port number, 0-65535 (0: any free one)"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{expected}, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{expected}, got {value}")
    return value


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {value}")
    return value


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default, except where there is none to show (switches, unset).

    Descriptions keep their paragraphs (argparse would run them together), each wrapped to the
    terminal; a paragraph with indented lines (a list, a table) is kept as written.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith("  ") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(paragraph.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                    )
                )
        return "\n\n".join(paragraphs)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = action.default
        if default is None or default is False or default == argparse.SUPPRESS:
            return action.help
        if not action.help or (isinstance(default, list) and not default):
            return action.help
        return super()._get_help_string(action)


LOG_FORMATS = ("auto", "console", "json")


def _common() -> argparse.ArgumentParser:
    # SUPPRESS: a subcommand's parser must not overwrite what was given before the subcommand.
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("logging")
    g.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logs"
    )
    g.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=argparse.SUPPRESS,
        help="logs on stderr: console (for people), json (one object a line), auto (console "
        "on a terminal, else json; the default)",
    )
    return p


COMMON = _common()
"""Flags every subcommand takes, before or after its name."""


def add_command(
    sub: Any, name: str, summary: str, description: str = ""
) -> argparse.ArgumentParser:
    """A subcommand with the shared flags and help format; `summary` is its line in the list."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=summary,
        description=description or summary[0].upper() + summary[1:] + ".",
        formatter_class=HelpFormatter,
        parents=[COMMON],
    )
    return parser


def add_store_flags(p: argparse.ArgumentParser, what: str) -> None:
    """`--store PATH` (default ./metasre.db) and `--no-store`."""
    p.add_argument(
        "--store",
        default="metasre.db",
        metavar="PATH",
        help=f"SQLite trajectory store where {what} (created if missing; `metasre export` "
        "reads it; `metasre serve` also takes a postgresql:// URL)",
    )
    p.add_argument("--no-store", action="store_true", help="record nothing")
