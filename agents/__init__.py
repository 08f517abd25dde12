"""Agents that play META-SRE: policies, and (over the wire) the client SDK and rollouts.

Nothing here imports the simulator or the service: agents see exactly what a client in any
other language sees.
"""
