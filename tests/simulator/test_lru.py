"""The one bounded memo: what it keeps, what it drops, and that nothing else hand-rolls one."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from metasre.simulator.lru import Lru

ROOT = Path(__file__).resolve().parent.parent.parent
PRODUCT = ("simulator", "service", "agents", "cli", "conformance")


def test_a_put_past_the_limit_drops_the_least_recently_used():
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # a is now the most recent
    lru.put("c", 3)
    assert lru.keys() == ["a", "c"] and "b" not in lru and len(lru) == 2


def test_a_peek_leaves_the_age_and_a_miss_gives_the_default():
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.peek("a") == 1 and lru.peek("z") is None and lru.get("z", 7) == 7
    lru.put("c", 3)
    assert lru.keys() == ["b", "c"]


def test_setdefault_keeps_the_first_and_pop_and_clear_forget():
    lru: Lru[str, list[int]] = Lru(3)
    first, second = [1], [2]
    assert lru.setdefault("k", first) is first
    assert lru.setdefault("k", second) is first
    assert lru.pop("k") is first and lru.pop("k") is None
    lru.put("x", second)
    lru.clear()
    assert len(lru) == 0


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        Lru(0)


def test_threads_putting_at_once_never_overfill_it():
    lru: Lru[int, int] = Lru(64)

    def fill(base: int) -> None:
        for i in range(2000):
            lru.put(base + i, i)
            lru.get(base + i // 2)

    threads = [threading.Thread(target=fill, args=(n * 10_000,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lru) == 64 == len(set(lru.keys()))


def test_no_module_hand_rolls_another_lru():
    """An OrderedDict with popitem(last=False) is a second LRU: use metasre.simulator.lru."""
    found = []
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.parts[:2] == ("simulator", "scenarios") and len(rel.parts) > 3:
                continue  # scenario worlds: the code agents read and repair
            if rel == Path("simulator/lru.py"):
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
                if name in ("OrderedDict", "popitem"):
                    found.append(f"{rel}:{node.lineno}")
    assert found == []
