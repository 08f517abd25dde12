"""The GC freezer: freezes survivors, reclaims a closed session's cycles after churn."""

from __future__ import annotations

import gc
import weakref

from metasre.service.gc_freeze import YOUNG_THRESHOLD, GcFreezer


class _Node:
    """A cycle, like a closed session's coordinator and tasks."""

    def __init__(self) -> None:
        self.me = self


def test_survivors_are_frozen_and_the_collector_is_given_back() -> None:
    before = gc.get_threshold()
    keeper = GcFreezer(min_reclaim_sessions=2)
    keeper.start()
    try:
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        held = [_Node() for _ in range(100)]
        keeper.tick(live_sessions=10, closed_total=0)
        # each survivor is in the permanent generation now, out of the collector's way (the
        # freeze count alone can fall meanwhile, when another thread frees frozen objects)
        ids = {id(node) for node in held}
        assert not any(id(o) in ids for g in range(3) for o in gc.get_objects(generation=g))
        assert gc.get_freeze_count() >= 100
        assert keeper.reclaims == 0
    finally:
        keeper.stop()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
    del held


def test_garbage_of_the_last_seconds_is_collected_not_frozen() -> None:
    keeper = GcFreezer()
    keeper.start()
    try:
        node = _Node()
        ref = weakref.ref(node)
        del node
        keeper.tick(live_sessions=10, closed_total=0)
        assert ref() is None
    finally:
        keeper.stop()


def test_frozen_cycles_are_reclaimed_once_enough_sessions_closed() -> None:
    keeper = GcFreezer(min_reclaim_sessions=4)
    keeper.start()
    try:
        node = _Node()
        ref = weakref.ref(node)
        keeper.tick(live_sessions=8, closed_total=0)  # frozen while alive
        del node
        gc.collect()
        assert ref() is not None  # frozen: no collection walks it
        keeper.tick(live_sessions=8, closed_total=3)  # not enough churn yet
        assert ref() is not None and keeper.reclaims == 0
        keeper.tick(live_sessions=8, closed_total=4)
        assert ref() is None and keeper.reclaims == 1
        keeper.tick(live_sessions=8, closed_total=7)  # counted from the last reclaim
        assert keeper.reclaims == 1
    finally:
        keeper.stop()
