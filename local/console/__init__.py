"""The console: a web page on the Slack stand-in's port that shows its workspace as Slack lays it out.

Theory of operation: the page is plain HTML, CSS and JavaScript
(``static/``), served at ``/`` by the stand-in. It holds no state of its
own: it opens one event stream (``/_console/events``, server-sent events)
for the person it acts as and the thread it shows, and every message on
that stream is a whole snapshot of what that person sees (``view.snapshot``),
rebuilt whenever the stand-in's state changes (``Standin.changes``), so a
reload restores everything. What the page does goes through the stand-in's
control API, the same signed Events and Interactivity callbacks that
``./kourier say`` sends. Beside the thread it shows what lies underneath:
the Web API calls Kourier made about it (kept by the stand-in), the turns
and session Firestore keeps for it (``underneath.StoreMirror``, a listener
on the emulator), and the requests the demo agent received for it
(``underneath.AgentRequests``).
"""

from local.console.routes import Console, routes

__all__ = ["Console", "routes"]
