"""The scenario registry: declarative incident folders rendered per seed."""
