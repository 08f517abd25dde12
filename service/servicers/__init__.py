"""The gRPC servicers: control, agent and watch planes over one session registry."""

from metasre.service.servicers.agent import AgentServicer
from metasre.service.servicers.control import ControlServicer
from metasre.service.servicers.watch import WatchServicer

__all__ = ["AgentServicer", "ControlServicer", "WatchServicer"]
