"""A digest of every family's rendered worlds, one line per (family, seed).

It proves that a change to how families are written leaves what they render alone.

For every family id (`metasre scenarios --json`'s list, parts included) and seeds 0-11, hashes
the rendered instance: the spec's repr, the drawn values, every file and commit of the code tree,
and the hidden files. Run it on two trees and compare the outputs:

    python tools/world_digest.py > before.txt   # on main
    python tools/world_digest.py > after.txt    # on the branch
    diff before.txt after.txt

It imports only `metasre` (the tree the interpreter's install maps), so it runs on a tree from
before it existed too. It runs under PYTHONHASHSEED=0 (it restarts itself so): a rendering
that depends on the order of a set of strings differs between two processes otherwise
(simulator/scenarios/herring_commits.py picks a commit's ticket prefix by `max(set(...))`,
which breaks ties by that order: ads-errors-v1 seed 7 renders two ways).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from metasre.simulator.scenarios import registry


def digest(scenario_id: str, seed: int) -> str:
    """The sha256 of `scenario_id` rendered for `seed` (spec, values, tree, history, hidden)."""
    instance = registry.resolve(scenario_id).instance(seed)
    h = hashlib.sha256()
    h.update(repr(instance.spec).encode())
    h.update(json.dumps(dict(instance.values), sort_keys=True, default=repr).encode())
    for path, text in sorted(instance.tree.files.items()):
        h.update(f"\0{path}\0{text}".encode())
    for commit in instance.tree.commits:
        h.update(repr(commit).encode())
    for path, data in sorted(instance.hidden_files.items()):
        h.update(f"\0{path}\0".encode() + data)
    return h.hexdigest()


def main(seeds: range = range(12)) -> None:
    """Print every family's digest for every seed of `seeds`."""
    ids = sorted(set(registry.scenario_ids()) | set(registry.part_ids()))
    for scenario_id in ids:
        for seed in seeds:
            print(scenario_id, seed, digest(scenario_id, seed), flush=True)
    print(f"{len(ids)} families x {len(seeds)} seeds", file=sys.stderr)


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    main()
