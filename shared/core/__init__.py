"""The pure core: decides, never does I/O.

Nothing under ``shared.core`` imports an adapter, a Google client, httpx,
slack_sdk or a2a. The functions feed it events and carry out what it returns.
"""
