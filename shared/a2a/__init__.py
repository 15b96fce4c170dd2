"""Kourier's side of every conversation with an agent: A2A 1.0 and 0.3 over JSON-RPC.

``client.AgentClient`` is what the turn engine calls; ``errors`` holds the
classified outcomes; ``check`` is ``kourier agent check``.
"""
