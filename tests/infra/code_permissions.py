"""What each Cloud Function's code does with Google services, read from the code.

Theory of operation: mypy type-checks the deployed code (functions/main.py as
``main`` and shared/) and keeps every expression's type. From each entry
point in main.py, a walk follows every function, method and class that the
code names: a plain name or a module attribute by what it refers to, a method
by the type of the object it is called on (and, for a Protocol or a base
class, every product class that implements it), lambdas and nested functions
included, plus the module-level code of every product module, which runs at
import. Along the way it records three kinds of facts:

- calls into Google's client libraries (``google.cloud.*``), each mapped by
  ``GOOGLE_CALLS`` to the kind of access it needs (an unknown one fails,
  naming the call, so that a new API call cannot slip through unnoticed);
- the settings read (``Settings`` fields, by environment variable), which say
  *which* topic, queue, account or secret the calls use;
- the config fields read whose type is ``SecretRef`` (by their YAML name, e.g.
  ``tokenSecretRef``): those name secrets in the config file.

The walk over-approximates (a branch never taken still counts), never
under-approximates what the typed code can do, so a grant the result asks for
may be unused on some path, but a call the code can make is never missed.
``needs()`` turns the facts into one ``Needs`` per entry point, each need with
the call path that proves it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mypy import build
from mypy.modulefinder import BuildSource
from mypy.nodes import (
    ClassDef,
    ComparisonExpr,
    Decorator,
    Expression,
    FuncDef,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RefExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.server.subexpr import get_subexpressions
from mypy.subtypes import is_subtype
from mypy.types import (
    FunctionLike,
    Instance,
    ProperType,
    TupleType,
    Type,
    TypeType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars_with_any

from tests.infra.layout import REPO_ROOT

MAIN_PY = REPO_ROOT / "functions" / "main.py"
SHARED = REPO_ROOT / "shared"
PRODUCT_PREFIXES = ("main.", "shared.")
SETTINGS_CLASS = "shared.settings.Settings"
SECRET_REF_CLASS = "shared.config.SecretRef"

# A name in Google's client libraries => the access using it needs; None: it
# makes no API call (a client, a path helper, an enum). A key ending in "."
# covers every name under it; the others are exact.
GOOGLE_CALLS: dict[str, str | None] = {
    "google.cloud.firestore.": "firestore",
    "google.cloud.firestore_v1.": "firestore",
    "google.cloud.pubsub_v1.PublisherClient": None,
    "google.cloud.pubsub_v1.types.BatchSettings": None,
    "google.cloud.pubsub_v1.publisher.client.Client": None,
    "google.pubsub_v1.services.publisher.client.PublisherClient.topic_path": None,
    "google.cloud.pubsub_v1.publisher.client.Client.publish": "publish",
    "google.cloud.pubsub_v1.publisher.futures.Future.result": None,
    "google.cloud.tasks_v2.CloudTasksClient": None,
    "google.cloud.tasks_v2.services.cloud_tasks.client.CloudTasksClient": None,
    "google.cloud.tasks_v2.services.cloud_tasks.client.CloudTasksClient.queue_path": None,
    "google.cloud.tasks_v2.services.cloud_tasks.client.CloudTasksClient.task_path": None,
    "google.cloud.tasks_v2.services.cloud_tasks.client.CloudTasksClient.create_task": "enqueue",
    "google.cloud.tasks_v2.services.cloud_tasks.transports.": None,
    "google.cloud.tasks_v2.HttpMethod": None,
    "google.cloud.tasks_v2.types.": None,
    "google.api_core.exceptions.": None,
    "google.protobuf.": None,
}


@dataclass(frozen=True)
class Need:
    """One kind of access (firestore, publish, enqueue, setting, config_secret) and its object."""

    kind: str
    target: str = ""


@dataclass
class Needs:
    """What one entry point's code needs, each need with the call path that shows it."""

    entry_point: str
    evidence: dict[Need, tuple[str, ...]] = field(default_factory=dict)

    def add(self, need: Need, path: tuple[str, ...]) -> None:
        self.evidence.setdefault(need, path)

    def targets(self, kind: str) -> set[str]:
        return {need.target for need in self.evidence if need.kind == kind}

    def has(self, kind: str) -> bool:
        return any(need.kind == kind for need in self.evidence)

    def path(self, kind: str, target: str = "") -> str:
        """The call path that shows a need, e.g. ``main.chat_ingress → … → create_task``."""
        for need, path in self.evidence.items():
            if need.kind == kind and (not target or need.target == target):
                return " → ".join(path)
        return "(none)"


def _module_name(path: Path) -> str:
    if path == MAIN_PY:
        return "main"
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _typed_program() -> build.BuildResult:
    """mypy's view of the deployed code: typed trees of main.py and shared/."""
    sources = [BuildSource(str(MAIN_PY), "main")] + [
        BuildSource(str(path), _module_name(path)) for path in sorted(SHARED.rglob("*.py"))
    ]
    options = Options()
    options.export_types = True
    options.preserve_asts = True
    options.incremental = False
    options.cache_dir = "/dev/null"
    options.ignore_missing_imports = True
    # Google's clients are read for their types; other libraries are opaque.
    options.follow_imports = "skip"
    options.per_module_options = {
        "google.*": {"follow_imports": "silent", "follow_untyped_imports": True}
    }
    return build.build(sources, options)


@cache
def _program() -> _Program:
    return _Program(_typed_program())


def _is_product(fullname: str) -> bool:
    return fullname.startswith(PRODUCT_PREFIXES)


class _Program:
    """The typed program, with lookups the walk needs."""

    def __init__(self, result: build.BuildResult) -> None:
        self.types: dict[Expression, Type] = result.types
        # main.py and every product module it imports, directly or not.
        self.trees: dict[str, MypyFile] = {}
        waiting = ["main"]
        while waiting:
            name = waiting.pop()
            state = result.graph.get(name)
            if name in self.trees or state is None or state.tree is None:
                continue
            self.trees[name] = state.tree
            waiting.extend(d for d in state.dependencies if _is_product(d + "."))
        self.classes: list[TypeInfo] = [
            symbol.node
            for tree in self.trees.values()
            for symbol in tree.names.values()
            if isinstance(symbol.node, TypeInfo) and _is_product(symbol.node.fullname)
        ]

    def implementations(self, info: TypeInfo, name: str) -> Iterator[Node]:
        """``info``'s own ``name`` member and those of every product class that implements it."""
        own = info.get(name)
        if own is not None and own.node is not None:
            yield own.node
        base = fill_typevars_with_any(info)
        for candidate in self.classes:
            if candidate is info or name not in candidate.names:
                continue
            if info in candidate.mro or (
                info.is_protocol and is_subtype(fill_typevars_with_any(candidate), base)
            ):
                node = candidate.names[name].node
                if node is not None:
                    yield node


@dataclass
class _Facts:
    google: dict[str, tuple[str, str]] = field(default_factory=dict)  # fullname => (where, in)
    settings: dict[str, str] = field(default_factory=dict)  # field name => in
    secret_refs: dict[tuple[str, str], str] = field(default_factory=dict)  # (class, field) => in


class _Walk:
    """Everything one entry point reaches, and the facts along the way."""

    def __init__(self, program: _Program) -> None:
        self.program = program
        self.parent: dict[str, str | None] = {}
        self.pending: list[tuple[str, list[Expression]]] = []
        self.current = ""
        self.facts = _Facts()

    def run(self, functions: list[FuncDef], modules: list[MypyFile]) -> None:
        """Walk from ``functions`` and the import-time code of ``modules``."""
        for module in modules:
            self.parent[module.fullname] = None
            top_level = [
                expression
                for statement in module.defs
                if not isinstance(statement, FuncDef | Decorator | OverloadedFuncDef | ClassDef)
                and not _runs_as_script_only(statement)
                for expression in get_subexpressions(statement)
            ]
            self.pending.append((module.fullname, top_level))
        for function in functions:
            self._reach(function, None)
        while self.pending:
            self.current, expressions = self.pending.pop()
            for expression in expressions:
                if isinstance(expression, MemberExpr):
                    self._member_expression(expression)
                elif isinstance(expression, NameExpr):
                    self._referenced(expression)

    def path(self, name: str) -> tuple[str, ...]:
        chain = [name]
        while (parent := self.parent.get(chain[-1])) is not None:
            chain.append(parent)
        return tuple(reversed(chain))

    def _reach(self, node: Node | None, parent: str | None) -> None:
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, OverloadedFuncDef):
            for item in node.items:
                self._reach(item, parent)
        elif isinstance(node, TypeInfo):
            for name in ("__init__", "__post_init__", "__call__"):
                member = node.get(name)
                if member is not None:
                    self._reach(member.node, parent)
        elif (
            isinstance(node, FuncDef)
            and _is_product(node.fullname)
            and node.fullname not in self.parent
        ):
            self.parent[node.fullname] = parent
            self.pending.append((node.fullname, get_subexpressions(node)))

    def _member_expression(self, node: MemberExpr) -> None:
        if node.fullname and not isinstance(node.node, Var):
            self._referenced(node)
            return
        for info in _classes_of(self.program.types.get(node.expr)):
            self._member(info, node)

    def _referenced(self, node: RefExpr) -> None:
        name = node.fullname or ""
        if isinstance(node.node, MypyFile):
            return  # a module; what is used of it is a member
        if name.startswith("google."):
            self._google(name, node)
        else:
            self._reach(node.node, self.current)

    def _member(self, info: TypeInfo, node: MemberExpr) -> None:
        if info.fullname.startswith("google."):
            owner = next((base for base in info.mro if node.name in base.names), info).fullname
            self._google(f"{owner}.{node.name}", node)
            return
        if not _is_product(info.fullname):
            return
        member = _member_node(info, node.name)
        if info.fullname == SETTINGS_CLASS and isinstance(member, Var):
            self.facts.settings.setdefault(node.name, self.current)
        if isinstance(member, Var) and _mentions(member.type, SECRET_REF_CLASS):
            self.facts.secret_refs.setdefault((info.fullname, node.name), self.current)
        for implementation in self.program.implementations(info, node.name):
            self._reach(implementation, self.current)

    def _google(self, name: str, node: Node) -> None:
        self.facts.google.setdefault(name, (f"line {node.line}", self.current))


def _runs_as_script_only(statement: Node) -> bool:
    """``if __name__ == "__main__":``, which never runs in a function."""
    return (
        isinstance(statement, IfStmt)
        and isinstance(statement.expr[0], ComparisonExpr)
        and any(
            isinstance(operand, NameExpr) and operand.name == "__name__"
            for operand in statement.expr[0].operands
        )
    )


def _fullname(node: Node | None) -> str:
    if isinstance(node, MypyFile):
        return node.fullname
    return getattr(node, "fullname", "") or ""


def _dotted(expression: Expression) -> str:
    """``a.b.c`` for a chain of names, else ""."""
    if isinstance(expression, NameExpr):
        return expression.name
    if isinstance(expression, MemberExpr):
        return f"{_dotted(expression.expr)}.{expression.name}"
    return ""


def _member_node(info: TypeInfo, name: str) -> Node | None:
    symbol = info.get(name)
    return symbol.node if symbol is not None else None


def _mentions(type_: Type | None, fullname: str) -> bool:
    proper = get_proper_type(type_) if type_ is not None else None
    if isinstance(proper, Instance):
        return proper.type.fullname == fullname or any(
            _mentions(arg, fullname) for arg in proper.args
        )
    if isinstance(proper, UnionType):
        return any(_mentions(item, fullname) for item in proper.items)
    return False


def _classes_of(type_: Type | None) -> Iterator[TypeInfo]:
    proper: ProperType | None = get_proper_type(type_) if type_ is not None else None
    if isinstance(proper, Instance):
        yield proper.type
    elif isinstance(proper, UnionType):
        for item in proper.items:
            yield from _classes_of(item)
    elif isinstance(proper, TypeType):
        yield from _classes_of(proper.item)
    elif isinstance(proper, TupleType):
        yield proper.partial_fallback.type
    elif isinstance(proper, FunctionLike) and proper.is_type_obj():
        yield proper.type_object()


def entry_points() -> dict[str, FuncDef]:
    """The functions of main.py that functions-framework serves (decorated by it)."""
    tree = _program().trees["main"]
    found: dict[str, FuncDef] = {}
    for statement in tree.defs:
        if isinstance(statement, Decorator) and any(
            _dotted(decorator).startswith("functions_framework.")
            for decorator in statement.decorators
        ):
            found[statement.func.name] = statement.func
    return found


def _google_access(name: str) -> str | None:
    """The access a Google name needs; KeyError if GOOGLE_CALLS does not know it."""
    if name in GOOGLE_CALLS:
        return GOOGLE_CALLS[name]
    packages = [key for key in GOOGLE_CALLS if key.endswith(".") and name.startswith(key)]
    if not packages:
        raise KeyError(name)
    return GOOGLE_CALLS[max(packages, key=len)]


@cache
def needs() -> dict[str, Needs]:
    """Entry point => what its code needs (see the module's theory of operation)."""
    program = _program()
    settings_module = importlib.import_module("shared.settings")
    aliases = {
        name: info.alias or name for name, info in settings_module.Settings.model_fields.items()
    }
    modules = [tree for name, tree in program.trees.items() if name != "main"]
    result: dict[str, Needs] = {}
    for entry_point, function in entry_points().items():
        walk = _Walk(program)
        walk.run([function], modules)
        found = Needs(entry_point)
        unknown: list[str] = []
        for name, (where, caller) in walk.facts.google.items():
            try:
                access = _google_access(name)
            except KeyError:
                unknown.append(f"{name} ({caller}, {where})")
                continue
            if access is not None:
                found.add(Need(access), (*walk.path(caller), name))
        assert not unknown, (
            f"{entry_point} calls Google client names that tests/infra/code_permissions.py "
            f"does not know: {sorted(unknown)}. Add each to GOOGLE_CALLS with the access it "
            "needs (None if it makes no API call), and grant that access in infra/permissions.tf."
        )
        for setting, caller in walk.facts.settings.items():
            found.add(Need("setting", aliases.get(setting, setting)), walk.path(caller))
        for (owner, field_name), caller in walk.facts.secret_refs.items():
            model = getattr(
                importlib.import_module(owner.rsplit(".", 1)[0]), owner.rsplit(".", 1)[1]
            )
            yaml_name = model.model_fields[field_name].alias or field_name
            found.add(Need("config_secret", yaml_name), walk.path(caller))
        result[entry_point] = found
    return result


if __name__ == "__main__":
    for entry, found_needs in needs().items():
        print(entry)
        for need in sorted(found_needs.evidence, key=lambda n: (n.kind, n.target)):
            print(f"  {need.kind:14} {need.target:32} {found_needs.path(need.kind, need.target)}")
