"""Each generated family's axes module, named like its folder (see tools.families)."""
