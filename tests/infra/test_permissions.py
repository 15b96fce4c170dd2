"""Each function's service account holds exactly what its code needs.

Theory of operation: ``code_permissions`` reads the deployed code and says,
per entry point, which Google APIs it calls, which settings it reads and
which config secrets it reads (see its docstring). This test turns that into
the columns of the one table in infra/permissions.tf
(``local.function_permissions``) and compares the two both ways: a column
the code needs and the table lacks fails with the line to add and the call
path that needs it; a grant no code path uses fails with the line to remove.
Which topic or queue a call uses comes from the settings the code reads and
what Terraform puts in them (``KOURIER_FOLLOW_QUEUE =
google_cloud_tasks_queue.kourier["follow"].name`` makes it queue "follow").
A second test checks that every grant to a function's account is made from
that table, so that the table is the whole truth.

The emulators enforce no IAM, so nothing else would catch a missing grant
before a deploy.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.infra.code_permissions import Needs, needs

PERMISSIONS_TF = "infra/permissions.tf"
TASKS_ACCOUNT_SETTING = "KOURIER_TASKS_SERVICE_ACCOUNT"

# Column of the table => the IAM resource and role that grant it.
COLUMN_GRANTS: dict[str, tuple[str, str]] = {
    "firestore": ("google_project_iam_member", "roles/datastore.user"),
    "publish": ("google_pubsub_topic_iam_member", "roles/pubsub.publisher"),
    "enqueue": ("google_cloud_tasks_queue_iam_member", "roles/cloudtasks.enqueuer"),
    "act_as_tasks": ("google_service_account_iam_member", "roles/iam.serviceAccountUser"),
    "secrets": ("google_secret_manager_secret_iam_member", "roles/secretmanager.secretAccessor"),
    "config_secrets": (
        "google_secret_manager_secret_iam_member",
        "roles/secretmanager.secretAccessor",
    ),
}


def first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def terraform_locals(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every ``local.<name>`` => its value as python-hcl2 reads it."""
    found: dict[str, Any] = {}
    for result in files.values():
        for block in result.get("parsed", {}).get("locals", []):
            found.update({name: first(value) for name, value in block.items()})
    return found


def resources(files: dict[str, dict[str, Any]]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(file, type, name, body) of every resource."""
    return [
        (path, kind, name, body)
        for path, result in files.items()
        for block in result.get("parsed", {}).get("resource", [])
        for kind, named in block.items()
        for name, body in named.items()
    ]


def resource_keys(environment: dict[str, str], suffix: str, pattern: str) -> dict[str, str]:
    """Setting (environment variable ending in ``suffix``) => the resource key it names."""
    keys: dict[str, str] = {}
    for variable, expression in environment.items():
        if variable.endswith(suffix):
            match = re.search(pattern, str(expression))
            assert match, f"functions.tf sets {variable} = {expression}: cannot tell which one"
            keys[variable] = match.group(1)
    return keys


@pytest.fixture(scope="module")
def table(terraform_files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    values = terraform_locals(terraform_files)
    assert "function_permissions" in values, (
        f"infra/ defines no local.function_permissions: {PERMISSIONS_TF} must hold the table "
        "of what each function's service account may do"
    )
    permissions: dict[str, dict[str, Any]] = values["function_permissions"]
    return permissions


def needed_columns(found: Needs, locals_: dict[str, Any]) -> dict[str, Any]:
    """The table row that the code of one entry point asks for."""
    environment = locals_["common_environment"]
    topics = {
        resource: key
        for key, expression in locals_["topics"].items()
        for resource in re.findall(r"google_pubsub_topic\.(\w+)\.", str(expression))
    }
    topic_of = {
        variable: topics[resource]
        for variable, resource in resource_keys(
            environment, "_TOPIC", r"google_pubsub_topic\.(\w+)\."
        ).items()
    }
    queue_of = resource_keys(environment, "_QUEUE", r'google_cloud_tasks_queue\.\w+\["(\w+)"\]')
    settings = found.targets("setting")
    publishes = found.has("publish")
    enqueues = found.has("enqueue")
    if publishes:
        assert settings & set(topic_of), (
            f"{found.entry_point} publishes ({found.path('publish')}) but reads no topic "
            f"setting that Terraform sets ({sorted(topic_of)}): which topic does it use?"
        )
    if enqueues:
        assert settings & set(queue_of), (
            f"{found.entry_point} creates Cloud Tasks ({found.path('enqueue')}) but reads no "
            f"queue setting that Terraform sets ({sorted(queue_of)}): which queue does it use?"
        )
    return {
        "firestore": found.has("firestore"),
        "publish": sorted({topic_of[s] for s in settings & set(topic_of)}) if publishes else [],
        "enqueue": sorted({queue_of[s] for s in settings & set(queue_of)}) if enqueues else [],
        "act_as_tasks": enqueues and TASKS_ACCOUNT_SETTING in settings,
        "secrets": sorted(settings & set(locals_["slack_secrets"])),
        "config_secrets": sorted(found.targets("config_secret")),
    }


def why(found: Needs, column: str, value: Any) -> str:
    """The call path behind one column's value."""
    if column in ("firestore", "publish", "enqueue"):
        return found.path(column)
    if column == "act_as_tasks":
        return found.path("setting", TASKS_ACCOUNT_SETTING)
    if column == "config_secrets":
        return "; ".join(found.path("config_secret", name) for name in value)
    return "; ".join(found.path("setting", name) for name in value)


def test_every_function_account_holds_exactly_what_its_code_needs(
    terraform_files: dict[str, dict[str, Any]], table: dict[str, dict[str, Any]]
) -> None:
    locals_ = terraform_locals(terraform_files)
    code = needs()
    assert set(table) == set(code), (
        f"local.function_permissions in {PERMISSIONS_TF} has rows {sorted(table)}; "
        f"functions/main.py has the entry points {sorted(code)}"
    )
    problems: list[str] = []
    for entry_point, found in code.items():
        row = table[entry_point]
        wanted = needed_columns(found, locals_)
        for column, value in wanted.items():
            granted = row.get(column)
            if isinstance(value, list):
                granted = sorted(granted or [])
                missing = [item for item in value if item not in granted]
                extra = [item for item in granted if item not in value]
                if missing:
                    problems.append(
                        f"{entry_point} needs {column} {missing} and does not have it: set "
                        f"{column} = {json.dumps(value)} in local.function_permissions."
                        f"{entry_point} ({PERMISSIONS_TF}). Needed by: "
                        f"{why(found, column, missing)}"
                    )
                if extra:
                    problems.append(
                        f"{entry_point} holds {column} {extra} that no code path uses: set "
                        f"{column} = {json.dumps(value)} in local.function_permissions."
                        f"{entry_point} ({PERMISSIONS_TF})"
                    )
            elif bool(granted) != value:
                verb = "needs" if value else "holds, and no code path uses,"
                because = f" Needed by: {why(found, column, [])}" if value else ""
                problems.append(
                    f"{entry_point} {verb} {column}: set {column} = {str(value).lower()} in "
                    f"local.function_permissions.{entry_point} ({PERMISSIONS_TF}).{because}"
                )
    collected = set(locals_["config_secret_names"])
    for entry_point, row in table.items():
        problems += [
            f"{entry_point} reads the secrets of config field {field}, which Terraform does not "
            f"collect: add {field} to local.config_secret_names (infra/main.tf), listing the "
            "secret names the config file gives in that field"
            for field in row.get("config_secrets", [])
            if field not in collected
        ]
    assert not problems, "\n".join(problems)


def test_every_grant_to_a_function_account_comes_from_the_table(
    terraform_files: dict[str, dict[str, Any]],
) -> None:
    locals_ = terraform_locals(terraform_files)

    def derived_text(name: str, seen: frozenset[str] = frozenset()) -> str:
        """A local's definition with those of the locals it uses, as text."""
        text = json.dumps(locals_.get(name, ""))
        used = set(re.findall(r"local\.(\w+)", text)) - seen - {name}
        return text + "".join(derived_text(other, seen | {name}) for other in used)

    grants: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    for path, kind, name, body in resources(terraform_files):
        if "google_service_account.function[" not in str(body.get("member", "")):
            continue
        where = f"{path}: {kind}.{name}"
        role = str(first(body.get("role", "")))
        iterated = re.findall(r"local\.(\w+)", str(first(body.get("for_each", ""))))
        if (kind, role) not in COLUMN_GRANTS.values():
            problems.append(
                f"{where} grants {role} to a function's account, which no column of "
                f"local.function_permissions stands for: grant it from the table, or remove it"
            )
        elif path != "permissions.tf" or not any(
            "local.function_permissions" in derived_text(local) for local in iterated
        ):
            problems.append(
                f"{where} grants {role} to a function's account without being made from "
                f"local.function_permissions: move it to {PERMISSIONS_TF} and iterate the table"
            )
        else:
            grants[(kind, role)] = " ".join(derived_text(local) for local in iterated)
    for column, (kind, role) in COLUMN_GRANTS.items():
        if f".{column}" not in grants.get((kind, role), ""):
            problems.append(
                f"no {kind} with role {role} is made from the {column} column of "
                f"local.function_permissions: nothing grants what that column says"
            )
    assert not problems, "\n".join(problems)
