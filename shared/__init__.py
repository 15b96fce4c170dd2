"""Agent Kourier: the Python code shared by every Cloud Function."""
