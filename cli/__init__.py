"""The metasre command line: the one place that ties the packages together."""

import os
import sys

# gRPC's C core prints its own lines on stderr (a port in use, a failed TLS handshake) before
# the command's one-line error says the same. It reads its log level once, when `grpc` is
# first imported, which the command line's modules do: so it is set here, before any of them,
# unless the user set it. -v shows gRPC's errors again. Child servers inherit it.
if "GRPC_VERBOSITY" not in os.environ:
    _verbose = any(a in ("-v", "--verbose") for a in sys.argv[1:])
    os.environ["GRPC_VERBOSITY"] = "ERROR" if _verbose else "NONE"
