"""``python -m local.demo_agent``: run the demo agent."""

from local.demo_agent.server import main

main()
