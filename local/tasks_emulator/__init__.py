"""Local Cloud Tasks emulator: gcloud-tasks-emulator plus the behaviours the product relies on.

Runs only in its own venv (.venvs/tasks-emulator, made by local/install_emulators.sh):
``.venvs/tasks-emulator/bin/python -m local.tasks_emulator --port 8390``.
"""
