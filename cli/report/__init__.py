"""`metasre report`: one self-contained HTML page of results read from stores or exports.

`sources` reads the inputs, `episodes` turns each stored episode into its figures and its viewer
form, `summary` estimates over seeds, `plots` makes the Plotly figures, `page` renders them with
the trajectories into the page, `command` is the command line. Only `command` is imported here:
the rest needs the `report` extra (Plotly, Jinja2), loaded when the command runs.
"""

from .command import add_parser, report_command

__all__ = ["add_parser", "report_command"]
