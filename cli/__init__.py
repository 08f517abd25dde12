"""The metasre command line: the one place that ties the packages together."""
