"""The rider's rewrite (`metasre.agents.policies.companions.neutral`) keeps a program's meaning."""

from __future__ import annotations

import ast

from metasre.agents.policies.companions import neutral

SOURCE = '''"""A module."""

import os

QUERY = """
SELECT id
  FROM users
"""
TOTAL = 1 + \\
    2


def f(x: int) -> str:
    # a comment
    return f"{x}" + 'y'
'''


def test_a_ridden_file_parses_to_the_same_program_with_its_strings_unchanged() -> None:
    lines = SOURCE.splitlines()
    ridden = neutral(lines)
    assert ridden != lines and len(ridden) == len(lines)
    text = "\n".join(ridden) + "\n"
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(SOURCE))
    changed = [i for i, (a, b) in enumerate(zip(lines, ridden, strict=True)) if a != b]
    assert all(ridden[i] == lines[i] + " " for i in changed)
    assert not any(lines[i].endswith("\\") or not lines[i].strip() for i in changed)


def test_a_file_that_does_not_tokenize_is_left_alone() -> None:
    lines = ['x = """never closed', "y = 1"]
    assert neutral(lines) == lines
