"""Every change of a session, a question or a turn's state is made in the pure core.

The core's state models are its mutable dataclasses (``Session``,
``OpenQuestion``, ``TurnState``, ``Telling``, ``TaskView``): each change of
one is a named transition of ``shared.core`` (see the module docstrings of
``shared.core.session`` and ``shared.core.questions``), which the shell calls
and then stores. This test reads every module of the shell (``shared/``
outside ``shared/core``, and ``functions/``) and fails on an assignment to
a field of one of them (``x.field = ...``, ``x.field += ...``,
``x.field[k] = ...``, ``setattr(x, "field", ...)``), naming the file and line.

Which object is assigned to is not always known without a type checker, so
the scan is conservative: a receiver annotated with a type that is not a
core model (a parameter, ``x: Turn = ...``) passes, and so does ``self``
(a shell object's own attributes); any other receiver of an attribute named
like a core model's field is reported. Annotate it if it is something else.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "shared" / "core"
SHELL = sorted(
    path
    for path in [*(ROOT / "shared").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    if CORE not in path.parents
)


def _mutable_dataclasses(path: Path) -> Iterator[str]:
    """The names of the dataclasses ``path`` defines that are not frozen."""
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            named = call.func if call is not None else decorator
            frozen = call is not None and any(
                keyword.arg == "frozen"
                and isinstance(keyword.value, ast.Constant)
                and keyword.value.value is True
                for keyword in call.keywords
            )
            if isinstance(named, ast.Name) and named.id == "dataclass" and not frozen:
                yield node.name


def _core_models() -> dict[str, frozenset[str]]:
    """Each state model of the core (a mutable dataclass of ``shared/core``): its fields."""
    models = {}
    for path in sorted(CORE.glob("*.py")):
        module = importlib.import_module(f"shared.core.{path.stem}")
        for name in _mutable_dataclasses(path):
            fields = dataclasses.fields(getattr(module, name))
            models[name] = frozenset(field.name for field in fields)
    return models


MODELS = _core_models()


def _names_in(annotation: ast.expr) -> set[str]:
    """The type names an annotation mentions (a string annotation is parsed)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    names = set()
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


class _Scan(ast.NodeVisitor):
    """Collects ``(line, what)`` for each assignment to a field of a core model."""

    def __init__(self, models: dict[str, frozenset[str]]) -> None:
        self.models = models
        self.found: list[tuple[int, str]] = []
        self.scopes: list[dict[str, set[str]]] = [{}]
        """The annotated names in scope (innermost last): the type names each mentions."""

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
        self.scopes.append(
            {arg.arg: _names_in(arg.annotation) for arg in every if arg.annotation is not None}
        )
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.scopes[-1][node.target.id] = _names_in(node.annotation)
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            self._field(node.args[0], node.args[1].value, node.lineno, ast.unparse(node))
        self.generic_visit(node)

    def _target(self, target: ast.expr, line: int) -> None:
        match target:
            case ast.Tuple(elts=elements) | ast.List(elts=elements):
                for element in elements:
                    self._target(element, line)
            case ast.Starred(value=value):
                self._target(value, line)
            case ast.Attribute(value=receiver, attr=name):
                self._field(receiver, name, line, ast.unparse(target))
            case ast.Subscript(value=ast.Attribute(value=receiver, attr=name)):
                self._field(receiver, name, line, ast.unparse(target))

    def _field(self, receiver: ast.expr, name: str, line: int, what: str) -> None:
        owners = sorted(model for model, fields in self.models.items() if name in fields)
        if not owners:
            return
        if isinstance(receiver, ast.Name):
            if receiver.id == "self":
                return
            annotated = next(
                (scope[receiver.id] for scope in reversed(self.scopes) if receiver.id in scope),
                None,
            )
            if annotated is not None:
                owners = [model for model in owners if model in annotated]
                if not owners:
                    return
        self.found.append((line, f"{what} ({' or '.join(f'{m}.{name}' for m in owners)})"))


def scan(source: str, models: dict[str, frozenset[str]] = MODELS) -> list[tuple[int, str]]:
    """The assignments to a core model's field in ``source``: line, and what is assigned."""
    visitor = _Scan(models)
    visitor.visit(ast.parse(source))
    return sorted(visitor.found)


def test_the_core_state_models_are_found() -> None:
    assert {"Session", "OpenQuestion", "TurnState", "Telling", "TaskView"} <= set(MODELS)
    assert "task_id" in MODELS["Session"]
    assert "prompt_ts" in MODELS["OpenQuestion"]


def test_no_module_outside_the_core_changes_a_core_state_model() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in SHELL
        for line, what in scan(path.read_text())
    ]
    assert not found, (
        "a core state model is changed outside shared/core; make each change a named "
        "transition of shared.core (or annotate the receiver, if it is no core model):\n"
        + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("session.task_id = 't'", [(1, "session.task_id (Session.task_id or TurnState.task_id)")]),
        (
            "self.claim.session.generation += 1",
            [(1, "self.claim.session.generation (OpenQuestion.generation or Session.generation)")],
        ),
        ("a, q.prompt_ts = 1, 't'", [(1, "q.prompt_ts (OpenQuestion.prompt_ts)")]),
        ("q.replies[0] = 'm'", [(1, "q.replies[0] (OpenQuestion.replies)")]),
        ("setattr(t, 'told', 'x')", [(1, "setattr(t, 'told', 'x') (Telling.told)")]),
        (
            "def f(q: OpenQuestion) -> None:\n    q.status = 's'",
            [(2, "q.status (OpenQuestion.status)")],
        ),
        (
            "def f(q: 'OpenQuestion | None') -> None:\n    q.status = 's'",
            [(2, "q.status (OpenQuestion.status)")],
        ),
        # Not a core model's field, or not a core model, or the shell object's own attribute:
        ("stream.text = 'x'", []),
        ("def f(turn: Turn) -> None:\n    turn.status = 'done'", []),
        ("turn: Turn = g()\nturn.status = 'done'", []),
        ("self.task_id = 't'", []),
        ("session = sessions.follow(session, 't')", []),
    ],
)
def test_what_the_scan_reports(source: str, found: list[tuple[int, str]]) -> None:
    assert scan(source) == found
