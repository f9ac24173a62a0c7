"""The error tree and the one error body: every error class lives in errors.py with a status and a line in the
drawn tree, one function writes `{error, detail, request_id}`, and refusals from the middleware and from the
exception handlers come out the same; every route with caller input is held to the limits at the edge."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from fastapi.routing import APIRoute

import ems_service
from ems_service import errors, limits
from ems_service.config import Settings
from ems_service.db import upgrade

PACKAGE = Path(ems_service.__file__).parent


def _every_error_class() -> list[type[errors.EMSError]]:
    for info in pkgutil.walk_packages(ems_service.__path__, "ems_service."):
        importlib.import_module(info.name)  # a class defined anywhere in the service is found
    found, todo = [], [errors.EMSError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_error_class_is_in_errors_py_with_a_status_and_a_line_in_the_tree():
    drawn = dict(re.findall(r"(?m)^\s+(?:[│├└─ ]+)?([A-Za-z]+)\s+(\d{3}|any)\b", errors.__doc__ or ""))
    classes = _every_error_class()
    assert len(classes) >= 20
    for cls in classes:
        assert cls.__module__ == "ems_service.errors", f"{cls.__name__} is defined in {cls.__module__}"
        assert isinstance(cls.status_code, int) and 400 <= cls.status_code <= 599 or cls is errors.EMSError
        assert cls.__name__ in drawn, f"{cls.__name__} is missing from the tree in errors.py's docstring"
        if drawn[cls.__name__] != "any":
            assert int(drawn[cls.__name__]) == cls.status_code, cls.__name__
    assert set(drawn) == {cls.__name__ for cls in classes}  # nothing drawn that does not exist
    assert errors.HTTPError("gone", status_code=410).status_code == 410


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def test_one_function_writes_the_error_body():
    """A dict display with both `error` and `request_id` keys, or a JSONResponse, is the error body being written:
    errors.error_response is the only place allowed to."""
    writers = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            keys = {k.value for k in getattr(node, "keys", []) if isinstance(k, ast.Constant)}
            is_body = isinstance(node, ast.Dict) and {"error", "request_id"} <= keys
            is_response = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                           and node.func.id == "JSONResponse")
            if is_body or is_response:
                writers.append((path.relative_to(PACKAGE).as_posix(), node.lineno))
    body_lines = inspect.getsourcelines(errors.error_response)
    inside = range(body_lines[1], body_lines[1] + len(body_lines[0]))
    assert writers and all(p == "errors.py" and line in inside for p, line in writers), writers


def test_limit_messages_are_written_only_in_limits_py():
    """Every LimitExceeded is raised by ems_service.limits, which names the EMS_LIMITS__* setting; the two left in
    the dashboard are its own (a login-form size that is no setting, and the page size of its episode list)."""
    raised = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LimitExceeded":
                raised.append(path.relative_to(PACKAGE).as_posix())
    assert set(raised) - {"ui/login.py", "ui/episodes.py"} == {"limits.py"}, raised


def test_every_route_with_caller_input_is_checked_against_the_limits():
    """Path, query and body parameters (not the injected ones) mean a route must be wrapped by within_limits: the
    wrapper is what the MCP tools, calling the same functions, are limited by too."""
    from ems_service import create_app

    app = create_app(Settings(database_url="sqlite://", _env_file=None))
    checked_code = limits.within_limits(lambda rt: None).__code__
    unchecked = []
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        dependant = route.dependant
        takes_input = bool(dependant.path_params or dependant.query_params or dependant.body_params)
        if takes_input and route.endpoint.__code__ is not checked_code:
            unchecked.append(route.path)
    assert not unchecked, unchecked


@pytest.fixture
def sqlite_client(make_client, tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'ems.db'}"
    upgrade(url)
    settings = Settings(database_url=url, data_dir=tmp_path / "data", _env_file=None)
    settings.limits.max_page = 20
    with make_client(settings) as client:
        yield client


@pytest.mark.parametrize(("method", "path", "body", "headers", "status", "error", "where"), [
    ("POST", "/v1/search", b"x", {"content-type": "text/plain"}, 415, "UnsupportedMediaType", "middleware"),
    ("POST", "/v1/search", b"{}", {"content-type": "application/json", "content-length": "x"}, 400, "BadRequest",
     "middleware"),
    ("GET", "/v1/episodes/7", b"", {}, 404, "EpisodeNotFound", "a service"),
    ("PUT", "/v1/search", b"", {}, 405, "MethodNotAllowed", "Starlette"),
    ("GET", "/v1/nowhere", b"", {}, 404, "NotFound", "Starlette"),
    ("POST", "/v1/search", b'{"text": "\xc3\x28"}', {"content-type": "application/json"}, 400, "MalformedJSON",
     "FastAPI's body parser"),
    ("POST", "/v1/search", b'{"text": ', {"content-type": "application/json"}, 400, "MalformedJSON", "FastAPI"),
    ("POST", "/v1/search", b'{"k": 3}', {"content-type": "application/json"}, 422, "ValidationFailed", "FastAPI"),
    ("GET", "/v1/episodes?limit=21", b"", {}, 413, "LimitExceeded", "limits"),
    ("GET", "/v1/events?limit=21", b"", {}, 413, "LimitExceeded", "limits"),
])
def test_every_refusal_has_the_one_body(sqlite_client, method, path, body, headers, status, error, where):
    r = sqlite_client.request(method, path, content=body, headers={**headers, "x-request-id": "req-42"})
    assert r.status_code == status, (where, r.text)
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"error": error, "detail": r.json()["detail"], "request_id": "req-42"}
    assert r.json()["detail"] and r.headers["x-request-id"] == "req-42"
    if error == "LimitExceeded":
        assert "limit=21 exceeds the limit 20 (EMS_LIMITS__MAX_PAGE)" in r.json()["detail"]
