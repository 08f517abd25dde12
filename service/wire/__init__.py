"""The service on the wire: servicers, protobuf conversion, errors to statuses.

The gRPC servicers of the control, agent and watch planes, the conversion of the core's values
to and from protobuf (with the prebuilt bytes of the hot replies), and the one table that turns
errors into statuses. Built on the core, the store and the registry.
"""

from .agent import AgentServicer
from .control import ControlServicer
from .watch import WatchServicer

__all__ = ["AgentServicer", "ControlServicer", "WatchServicer"]
