"""The META-SRE benchmark suite: `python -m bench` (see `bench/__main__.py`)."""
