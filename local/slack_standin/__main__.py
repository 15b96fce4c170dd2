"""``python -m local.slack_standin``: see ``local.slack_standin.cli``."""

import sys

from local.slack_standin.cli import main

sys.exit(main())
