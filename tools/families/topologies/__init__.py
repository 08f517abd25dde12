"""Each generated platform's module, named like its `_topologies/` folder (see tools.families)."""
