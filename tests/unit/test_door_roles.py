"""Each door is typed against the roles of the application it uses, never the whole `Application`
(docs/architecture.md "Roles"): mypy then proves a door calls nothing beyond them, and these tests fail
when a door's type widens back."""

import ast
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from siteaudit.adapters.mcp import http as mcp_http
from siteaudit.adapters.rest import app as rest_app
from siteaudit.adapters.rest import billing, derived, device, export, resources
from siteaudit.adapters.web import create_web_app, guard, pages
from siteaudit.bootstrap import App
from siteaudit.entrypoints import cli, embedded, oneshot, scheduler, worker
from siteaudit.ports import application as application_port
from siteaudit.ports.application import (
    Admin,
    Application,
    CallerApi,
    DeviceFlow,
    Exports,
    Jobs,
    Payments,
    WebSession,
)
from siteaudit.settings import Settings

PACKAGE = Path(__file__).resolve().parents[2] / "siteaudit"

# Each door, the name of what it is given, and the role (or the door's own union of roles) it is typed as.
DOORS: list[tuple[Callable[..., Any], str, Any]] = [
    (worker.declare_actors, "application", Jobs),
    (worker.reaper, "application", Jobs),
    (scheduler.scheduler_pass, "application", Jobs),
    (cli._application, "return", Admin),
    (cli._admin, "return", Admin),
    (embedded._admin, "return", Admin),
    (oneshot.run_audit, "application", oneshot.OneShot),
    (rest_app.create_api, "application", rest_app.RestApplication),
    (resources.Resource.__init__, "application", CallerApi),
    (derived.routes, "application", derived.DeclaredApi),
    (device._DeviceResource.__init__, "application", DeviceFlow),
    (export.CrawlExport.__init__, "application", Exports),
    (billing.StripeWebhook.__init__, "application", Payments),
    (billing.TestCheckoutPage.__init__, "application", billing.TestCheckoutApplication),
    (mcp_http.mount_mcp, "application", CallerApi),
    (create_web_app, "application", pages.WebApplication),
    (pages.WebParts.__init__, "application", pages.WebApplication),
    (guard.Guard.__init__, "application", WebSession),
]


@pytest.mark.parametrize(("door", "name", "role"), DOORS, ids=lambda d: getattr(d, "__qualname__", str(d)))
def test_a_door_is_typed_against_its_roles(door: Callable[..., Any], name: str, role: Any) -> None:
    # What a door imports only for mypy (`if TYPE_CHECKING`) is named from where it lives.
    known = {**vars(application_port), "App": App, "Settings": Settings}
    assert typing.get_type_hints(door, localns=known)[name] is role


# A door's own union of roles: what it must not reach (a method of a role it does not use).
UNIONS: list[tuple[type, tuple[str, ...]]] = [
    (oneshot.OneShot, ("create_user", "sign_in", "start_device_login")),
    (rest_app.RestApplication, ("run_crawl_slice", "create_user", "audits_by_status")),
    (billing.TestCheckoutApplication, ("start_audit", "run_crawl_slice", "create_user")),
    (pages.WebApplication, ("run_crawl_slice", "create_user", "start_device_login", "receive_payment_event")),
]


@pytest.mark.parametrize(("union", "beyond"), UNIONS, ids=lambda u: getattr(u, "__name__", "beyond"))
def test_a_door_union_of_roles_is_narrower_than_the_application(union: type, beyond: tuple[str, ...]) -> None:
    assert Application not in inspect.getmro(union)
    assert [name for name in beyond if hasattr(union, name)] == []


# Where a door may name the whole application: what builds one (the composition root, bootstrap, is no door).
WHOLE_ALLOWED = {"siteaudit/entrypoints/oneshot.py:one_shot_application"}


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    found = [a.annotation for a in every if a.annotation is not None]
    return found + ([node.returns] if node.returns is not None else [])


def _names(annotation: ast.expr) -> set[str]:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    return {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)
    }


def whole_application_annotations(root: Path, base: Path) -> list[str]:
    """`file:function` (the file from `base`) of every function under `root` annotated with `Application` (a parameter or the
    return), and `file:Class` of every class deriving from it."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = str(path.relative_to(base))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any("Application" in _names(a) for a in _annotations(node)):
                    found.append(f"{where}:{node.name}")
            elif isinstance(node, ast.ClassDef):
                if any("Application" in _names(base) for base in node.bases):
                    found.append(f"{where}:{node.name}")
            elif isinstance(node, ast.AnnAssign) and "Application" in _names(node.annotation):
                found.append(f"{where}:{ast.unparse(node.target)}")
    return found


def test_no_door_is_typed_against_the_whole_application() -> None:
    doors = [
        found
        for part in ("adapters", "entrypoints")
        for found in whole_application_annotations(PACKAGE / part, PACKAGE.parent)
        if found not in WHOLE_ALLOWED
    ]
    assert doors == [], "type the door against the roles it uses (siteaudit/ports/application/)"


def test_the_scan_sees_a_door_typed_against_the_whole_application(tmp_path: Path) -> None:
    door = tmp_path / "siteaudit" / "door.py"
    door.parent.mkdir()
    door.write_text(
        "def serve(application: 'Application') -> None: ...\n"
        "class Page:\n    application: Application\n"
        "def built() -> ports.Application: ...\n"
    )
    assert sorted(whole_application_annotations(tmp_path / "siteaudit", tmp_path)) == [
        "siteaudit/door.py:application",
        "siteaudit/door.py:built",
        "siteaudit/door.py:serve",
    ]
