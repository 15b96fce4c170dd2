"""Local tooling: emulators, Slack stand-in, demo agent and the run command. Never deployed."""
