"""The google provider's schema, read from the bindings npm publishes for it.

Theory of operation: ``terraform validate`` needs the provider binary, which
cannot be downloaded here. ``@cdktf/provider-google`` (installed by
install.sh into .venvs/provider-schema) is generated from the provider's
schema (16.12.1 from hashicorp/google 6.50.0): one folder per resource
(``lib/cloudfunctions2-function``, ``lib/data-google-project``). Its
JavaScript turns each block into HCL with a function that lists every
argument by its Terraform name and says whether it is a nested block (and
which function converts that block); its type declarations mark an argument
optional with ``?``; and each class reads the attributes a resource exports
with ``get…Attribute('name')``. This module reads those three things into a
``Block`` tree per resource type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tests.infra.layout import REPO_ROOT

PACKAGE = REPO_ROOT / ".venvs" / "provider-schema" / "node_modules" / "@cdktf" / "provider-google"

_ENTRY = re.compile(
    r"^\s{8,12}(\w+): \{\s*value: (.*?),\s*isBlock: (true|false),", re.MULTILINE | re.DOTALL
)
_CONVERTER = re.compile(r"(?<![.\w])(\w+)ToHclTerraform\b")
_CAMEL = re.compile(r"(?:struct|this)\.(_?\w+)\)")
_INTERFACE = re.compile(r"export interface (\w+)(?: extends [\w.]+)? \{(.*?)\n\}", re.DOTALL)
_FIELD = re.compile(r"^\s+readonly (\w+)(\??):", re.MULTILINE)
_EXPORTED = re.compile(r"get\w*Attribute\('(\w+)'\)")


@dataclass
class Block:
    """Arguments of one block: name => nested Block (for a block) or None."""

    arguments: dict[str, Block | None] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    exported: set[str] = field(default_factory=set)


def folder(resource_type: str, data: bool = False) -> Path:
    """Where the bindings of a resource (or data source) type live."""
    name = resource_type.removeprefix("google_").replace("_", "-")
    return PACKAGE / "lib" / (f"data-google-{name}" if data else name)


def _body(source: str, start: int) -> str:
    """The text of the braces that open at or after ``start``."""
    depth = 0
    opened = source.index("{", start)
    for index in range(opened, len(source)):
        if source[index] == "{":
            depth += 1
        elif source[index] == "}":
            depth -= 1
            if depth == 0:
                return source[opened : index + 1]
    raise ValueError("unbalanced braces")


@cache
def schema(resource_type: str, data: bool = False) -> Block | None:
    """The block tree of a google resource type; None if the provider has none."""
    where = folder(resource_type, data)
    if not (where / "index.js").is_file():
        return None
    source = (where / "index.js").read_text(encoding="utf-8")
    source = source.split("//# sourceMappingURL=", 1)[0]
    declarations = (where / "index.d.ts").read_text(encoding="utf-8")
    if f'.tfResourceType = "{resource_type}"' not in source:
        return None
    optional = {
        name: {field_: mark == "?" for field_, mark in _FIELD.findall(body)}
        for name, body in _INTERFACE.findall(declarations)
    }
    class_name = re.search(
        r"^class (\w+) extends cdktf\.Terraform(?:Resource|DataSource) \{", source, re.MULTILINE
    )
    top = re.search(r"\n\s+synthesizeHclAttributes\(\) \{", source)
    assert top, f"{where}: no synthesizeHclAttributes"
    top_class = class_name.group(1) if class_name else ""

    def block(text: str, interface: str, output_reference: str) -> Block:
        found = Block()
        fields = optional.get(interface, {})
        for name, value, is_block in _ENTRY.findall(text):
            nested: Block | None = None
            if is_block == "true":
                converter = _CONVERTER.search(value)
                assert converter, f"{where}: block {name} without a converter: {value}"
                function = converter.group(1)
                start = source.index(f"function {function}ToHclTerraform(struct)")
                struct = function[0].upper() + function[1:]
                nested = block(_body(source, start), struct, f"{struct}OutputReference")
            found.arguments[name] = nested
            camel = _CAMEL.search(value)
            if camel and fields.get(camel.group(1).lstrip("_")) is False:
                found.required.add(name)
        reference = re.search(rf"class {output_reference} extends", source)
        if reference:
            found.exported = set(_EXPORTED.findall(_body(source, reference.start())))
        return found

    root = block(_body(source, top.start()), f"{top_class}Config", "")
    class_start = re.search(rf"class {top_class} extends", source) if top_class else None
    if class_start:
        root.exported = set(_EXPORTED.findall(_body(source, class_start.start())))
    return root
