"""Every google resource in infra/ matches the provider's published schema.

``terraform validate`` cannot run here (the provider cannot be downloaded),
so this reads the schema that ``@cdktf/provider-google`` carries
(provider_schema.py) and checks each resource and data block of a google
type: the type exists, every argument and nested block exists at its level
(``dynamic`` blocks included), every required argument is given, and every
attribute that another expression reads (``google_x.y.url``,
``google_x.y["k"].service_config[0].uri``) is one the resource exports.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.infra.provider_schema import PACKAGE, Block, schema

META_ARGUMENTS = {
    "count",
    "for_each",
    "depends_on",
    "lifecycle",
    "provider",
    "provisioner",
    "connection",
    "__start_line__",
    "__end_line__",
}
REFERENCE = re.compile(r"(?<![\w.])(data\.)?(google_\w+)\.(\w+)(?:\[[^\]]*\])?((?:\.\w+|\[\d+\])+)")


def problems(where: str, body: dict[str, Any], block: Block) -> list[str]:
    """What in ``body`` the schema ``block`` does not allow, or lacks."""
    found: list[str] = []
    given: set[str] = set()
    for name, value in body.items():
        if name in META_ARGUMENTS:
            continue
        if name == "dynamic":
            for dynamic in value:
                for inner, spec in dynamic.items():
                    given.add(inner)
                    nested = block.arguments.get(inner)
                    if nested is None:
                        found.append(f"{where}: dynamic {inner!r} is not a block here")
                        continue
                    for content in spec.get("content", []):
                        found += problems(f"{where}.{inner}", content, nested)
            continue
        given.add(name)
        if name not in block.arguments:
            found.append(f"{where}: unknown argument {name!r}")
            continue
        nested = block.arguments[name]
        if nested is not None:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    found += problems(f"{where}.{name}", item, nested)
    found += [f"{where}: missing required {name!r}" for name in sorted(block.required - given)]
    return found


def declared(files: dict[str, dict[str, Any]]) -> list[tuple[str, str, str, bool, dict[str, Any]]]:
    """(file, type, name, is data source, body) of every google resource and data block."""
    return [
        (path, kind, name, section == "data", body)
        for path, result in files.items()
        for section in ("resource", "data")
        for block in result.get("parsed", {}).get(section, [])
        for kind, named in block.items()
        if kind.startswith("google_")
        for name, body in named.items()
    ]


@pytest.fixture(scope="module")
def provider_schema(checkov_bin: object) -> None:
    """install.sh (run by the checkov fixture) installs the schema package."""
    assert (PACKAGE / "lib").is_dir(), f"{PACKAGE} is missing: run tests/infra/install.sh"


def test_every_google_resource_argument_is_in_the_provider_schema(
    provider_schema: None, terraform_files: dict[str, dict[str, Any]]
) -> None:
    blocks = declared(terraform_files)
    assert len(blocks) > 20, "found too few google resources: is infra/ parsed?"
    found: list[str] = []
    for path, kind, name, data, body in blocks:
        block = schema(kind, data)
        where = f"{path}: {'data.' if data else ''}{kind}.{name}"
        if block is None:
            found.append(
                f"{where}: the google provider has no such {'data source' if data else 'resource'}"
            )
            continue
        found += problems(where, body, block)
    assert not found, "\n".join(found)


def test_every_attribute_read_from_a_google_resource_is_exported(
    provider_schema: None, terraform_files: dict[str, dict[str, Any]]
) -> None:
    known = {(kind, name, data) for _, kind, name, data, _ in declared(terraform_files)}
    checked = 0
    found: list[str] = []
    for path, result in terraform_files.items():
        text = json.dumps(result.get("parsed", {}))
        for data, kind, name, chain in set(REFERENCE.findall(text)):
            if (kind, name, bool(data)) not in known:
                continue
            checked += 1
            block = schema(kind, bool(data))
            assert block is not None
            steps = re.findall(r"\.(\w+)|\[\d+\]", chain)
            for step in filter(None, steps):
                if step in block.exported or step == "id":
                    break
                if step not in block.arguments:
                    found.append(f"{path}: {kind}.{name}{chain}: {step!r} is not exported")
                    break
                nested = block.arguments[step]
                if nested is None:
                    break
                block = nested
    assert checked > 20, f"found only {checked} references to google resources"
    assert not found, "\n".join(sorted(found))


def test_the_check_finds_an_unknown_argument_and_a_missing_required_one(
    provider_schema: None,
) -> None:
    block = schema("google_cloudfunctions2_function")
    assert block is not None
    body = {
        "location": ["us-central1"],
        "service_config": [{"available_memory": ["1Gi"], "max_instances": [3]}],
        "dynamic": [{"event_trigger": {"content": [{"event_type": ["x"], "topic": ["t"]}]}}],
    }
    assert problems("f", body, block) == [
        "f.service_config: unknown argument 'max_instances'",
        "f.event_trigger: unknown argument 'topic'",
        "f: missing required 'name'",
    ]
