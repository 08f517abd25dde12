"""Warm-up of the fork server: run a tiny suite in-process before forking any child.

Stdlib only. The first import from a new folder, the first traceback, the first event loop
and the first unittest run each build caches lazily; doing that once in the helper means
every forked child starts with them built instead of paying for them (and for copying the
pages they dirty) on every run.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import linecache
import os
import sys
from collections.abc import Callable
from typing import Any

from . import minitest
from .folders import remove_tree

__all__ = ["warm_up"]

_FILES = {
    "warm_pkg/__init__.py": "",
    "warm_pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "warm_pkg/models.py": (
        "import collections\n"
        "import enum\n"
        "import functools\n"
        "from dataclasses import dataclass, field\n"
        "from typing import NamedTuple, Optional\n\n"
        "class Kind(enum.Enum):\n    A = 'a'\n    B = 'b'\n\n"
        "@dataclass(frozen=True)\nclass Item:\n    name: str\n    price: float = 0.0\n"
        "    tags: list = field(default_factory=list)\n    kind: Optional[Kind] = None\n\n"
        "@dataclass\nclass Box:\n    items: list\n\n"
        "class Pair(NamedTuple):\n    left: int\n    right: int\n\n"
        "Point = collections.namedtuple('Point', 'x y')\n\n"
        "@functools.lru_cache(maxsize=None)\ndef square(n):\n    return n * n\n"
    ),
    "warm_pkg/text.py": (
        "import datetime\nimport decimal\nimport json\nimport re\n\n"
        "WORD = re.compile(r'[a-z]+(?:-[a-z]+)*', re.IGNORECASE)\n\n"
        "def words(text):\n    return WORD.findall(text)\n\n"
        "def roundtrip(value):\n    return json.loads(json.dumps(value, sort_keys=True))\n\n"
        "def stamp():\n    return datetime.datetime(2024, 1, 2, 3, 4, 5).isoformat()\n\n"
        "def money(text):\n    return decimal.Decimal(text).quantize(decimal.Decimal('0.01'))\n"
    ),
    "warm_tests/test_warm.py": (
        "import asyncio\n"
        "import unittest\n"
        "from warm_pkg.calc import add\n"
        "from warm_pkg.models import Box, Item, Kind, Pair, Point, square\n"
        "from warm_pkg.text import money, roundtrip, stamp, words\n\n"
        "def test_pass():\n    assert add(1, 2) == 3\n\n"
        "def test_models():\n"
        "    item = Item('x', 1.5, kind=Kind.A)\n"
        "    assert Box([item]).items[0] == Item('x', 1.5, kind=Kind.A)\n"
        "    assert Pair(1, 2).right == 2 and Point(1, 2).x == 1 and square(3) == 9\n\n"
        "def test_text():\n"
        "    assert words('hello big-world') == ['hello', 'big-world']\n"
        "    assert roundtrip({'b': [1, 2.5, None]}) == {'b': [1, 2.5, None]}\n"
        "    assert stamp().startswith('2024') and str(money('1.005')) == '1.00'\n\n"
        "def test_fail():\n    assert add(1, 2) == 4\n\n"
        "def test_error():\n    raise KeyError('k')\n\n"
        "async def test_async():\n    await asyncio.sleep(0)\n\n"
        "class TestGroup:\n    def test_method(self):\n        print('out')\n\n"
        "class CaseTest(unittest.TestCase):\n"
        "    def test_unit(self):\n        self.assertEqual(add(2, 2), 4)\n"
    ),
    "warm_tests/test_broken.py": "def oops(:\n",
}
_MODULES = ("warm_pkg.calc", "warm_pkg.models", "warm_pkg.text")
"""Imported one by one before the suite, so a rehearsal can stop between them."""


class _Stop(Exception):
    pass


def warm_up(
    folder: str, stdlib: tuple[str, ...], should_stop: Callable[[], bool] | None = None
) -> None:
    """Run the warm-up suite in ``folder`` (created and removed here) and undo its traces.

    Args:
        folder: A path that does not exist yet.
        stdlib: The standard library directories, for traceback formatting.
        should_stop: Polled between tests; when it returns True the warm-up ends early.
    """

    def checkpoint() -> None:
        if should_stop is not None and should_stop():
            raise _Stop

    os.mkdir(folder, 0o700)
    modules_before = set(sys.modules)
    path_before = list(sys.path)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        for path, text in _FILES.items():
            full = os.path.join(folder, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(text)
        sys.path[:0] = [folder, os.path.join(folder, "warm_tests")]
        sink = io.StringIO()
        sys.stdout = sys.stderr = sink
        for name in _MODULES:
            checkpoint()
            importlib.import_module(name)
        messages: list[dict[str, Any]] = []
        minitest.run_suite(
            ["warm_tests/test_warm.py", "warm_tests/test_broken.py"],
            run_dir=folder,
            stdlib_dirs=stdlib,
            hidden_dirs=(os.path.dirname(os.path.realpath(__file__)),),
            emit=messages.append,
            after_each=checkpoint,
        )
    except _Stop:
        pass
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        sys.path[:] = path_before
        for name in set(sys.modules) - modules_before:
            if name.startswith(("warm_", "_sandbox_test_")):
                del sys.modules[name]
        for key in [k for k in sys.path_importer_cache if k.startswith(folder)]:
            del sys.path_importer_cache[key]
        linecache.clearcache()
        with contextlib.suppress(OSError):
            remove_tree(folder)
