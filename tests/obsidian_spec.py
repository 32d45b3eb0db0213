"""Spec conformance of the fake Obsidian server: every recorded exchange is checked
against the Local REST API's OpenAPI document (``tests/data/obsidian-openapi.yaml``, a
copy of ``shared/reference/obsidian-openapi.yaml``; a test keeps the two identical).

Responses are checked by schemathesis' own response checks (``status_code_conformance``,
``content_type_conformance``, ``response_schema_conformance``,
``response_headers_conformance``): an undocumented status code, media type, header or
JSON shape fails. Requests are checked here: the operation must exist in the spec, a
body's media type must be one the operation accepts (and a JSON body must match its
schema), header and query parameters must be declared and within their enums.

Stricter than schemathesis, so the fake cannot invent shapes the spec leaves open:

* JSON bodies may carry only the properties their schema declares (the spec's schemas
  seldom say ``required`` or ``additionalProperties: false``).
* Every 4xx body is the API's ``Error`` object with both ``errorCode`` and ``message``,
  also where the spec documents no content (``GET /vault/{filename}`` 404).
* 401: the spec declares bearer ``security`` for the whole API but lists no 401
  response; a 401 is accepted for a secured operation only, with the ``Error`` shape.

Injected faults (``Exchange.fault``) simulate a broken server and are not checked.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote

import jsonschema  # type: ignore[import-untyped]
import yaml

SPEC_PATH = Path(__file__).resolve().parent / "data" / "obsidian-openapi.yaml"


class ExchangeLike(Protocol):
    method: str
    target: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes
    fault: str | None


@functools.cache
def load_spec() -> dict[str, Any]:
    """The OpenAPI document as data."""
    spec: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text("utf-8"))
    return spec


@functools.cache
def schemathesis_schema() -> Any:
    import schemathesis

    return schemathesis.openapi.from_path(str(SPEC_PATH))


def _json_schema(node: Any, strict: bool) -> Any:
    """A spec schema as plain JSON Schema: ``nullable: true`` (which the document still
    uses) becomes "or null"; ``strict`` makes every object that declares ``properties``
    allow no others (the fake may not invent fields the spec does not name)."""
    if isinstance(node, list):
        return [_json_schema(item, strict) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value, strict) for key, value in node.items() if key != "nullable"}
    if strict and isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
        out["additionalProperties"] = False
    if node.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _schema_errors(schema: dict[str, Any], instance: Any, *, strict: bool = False) -> list[str]:
    """Messages of ``instance``'s violations of a spec schema (``#/components`` refs);
    ``strict`` forbids properties the schema does not declare."""
    rooted = _json_schema({**schema, "components": load_spec()["components"]}, strict)
    validator = jsonschema.Draft202012Validator(rooted)
    return [
        f"{'/'.join(map(str, e.path)) or '<root>'}: {e.message}"
        for e in validator.iter_errors(instance)
    ]


def patch_instruction_errors(instruction: Any) -> list[str]:
    """Violations of the spec's ``PatchInstruction`` schema (used by the fake's PATCH)."""
    return _schema_errors({"$ref": "#/components/schemas/PatchInstruction"}, instruction)


def route(method: str, target: str) -> tuple[str, dict[str, str]] | None:
    """``(path template, path parameters)`` of a request, or None if no spec path fits.

    ``/vault/{filename}`` and ``/vault/{pathToDirectory}/`` take whole sub-paths (their
    parameters have ``format: path``), so the match is by prefix, not by segment.
    """
    path = target.partition("?")[0]
    if path in ("/", "/vault/"):
        return path, {}
    if not path.startswith("/vault/"):
        return None
    rest = unquote(path[len("/vault/") :])
    if method == "GET" and path.endswith("/"):
        return "/vault/{pathToDirectory}/", {"pathToDirectory": rest.rstrip("/")}
    return "/vault/{filename}", {"filename": rest}


def _media(headers: dict[str, str], name: str = "content-type") -> str:
    return headers.get(name, "").split(";")[0].strip().lower()


def _request_problems(ex: ExchangeLike, operation: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    declared = {
        (p["in"], p["name"].lower()): p for p in operation.get("parameters", []) if "in" in p
    }
    for name, value in ex.request_headers.items():
        param = declared.get(("header", name))
        enum = (param or {}).get("schema", {}).get("enum")
        if enum is not None and value not in enum:
            problems.append(f"header {name}: {value!r} is not one of {enum}")
    for name, value in parse_qsl(ex.target.partition("?")[2], keep_blank_values=True):
        param = declared.get(("query", name.lower()))
        if param is None:
            problems.append(f"query parameter {name!r} is not declared")
        elif value not in param.get("schema", {}).get("enum", [value]):
            problems.append(f"query {name}: {value!r} is not allowed")
    if ex.request_body:
        content = operation.get("requestBody", {}).get("content", {})
        media = _media(ex.request_headers)
        if not content:
            problems.append("a body was sent to an operation that takes none")
        elif media not in content and "*/*" not in content:
            problems.append(f"request media type {media!r} is not one of {sorted(content)}")
        elif media in content and "json" in media:
            body = json.loads(ex.request_body)
            problems += [f"request body {m}" for m in _schema_errors(content[media]["schema"], body)]
    return problems


def _secured(operation: dict[str, Any]) -> bool:
    security = operation.get("security", load_spec().get("security", []))
    return bool(security)


def _error_shape_problems(ex: ExchangeLike) -> list[str]:
    """The body must be the API's ``Error``, with both of its fields."""
    if _media(ex.response_headers) != "application/json":
        return [f"{ex.status} error body has media type {_media(ex.response_headers)!r}"]
    schema = {"$ref": "#/components/schemas/Error", "required": ["errorCode", "message"]}
    errors = _schema_errors(schema, json.loads(ex.response_body), strict=True)
    return [f"{ex.status} error body {m}" for m in errors]


def _strict_json_problems(ex: ExchangeLike, documented: dict[str, Any] | None) -> list[str]:
    """A JSON body must not carry properties its documented schema does not declare."""
    media = _media(ex.response_headers)
    content = (documented or {}).get("content") or {}
    if "json" not in media or media not in content or not ex.response_body:
        return []
    schema = content[media].get("schema") or {}
    errors = _schema_errors(schema, json.loads(ex.response_body), strict=True)
    return [f"response body {m}" for m in errors]


def _response_problems(ex: ExchangeLike, template: str, params: dict[str, str]) -> list[str]:
    from requests import Request
    from schemathesis.checks import load_all_checks
    from schemathesis.core.failures import FailureGroup
    from schemathesis.core.transport import Response
    from schemathesis.specs.openapi import checks

    load_all_checks()
    operation = schemathesis_schema()[template][ex.method]
    prepared = Request(ex.method, f"http://127.0.0.1{ex.target}", headers=ex.request_headers,
                       data=ex.request_body or None).prepare()
    response = Response(
        status_code=ex.status, headers={k: [v] for k, v in ex.response_headers.items()},
        content=ex.response_body, request=prepared, elapsed=0.0, verify=True,
    )
    case = operation.Case(path_parameters=params)
    try:
        case.validate_response(response, checks=[
            checks.status_code_conformance, checks.content_type_conformance,
            checks.response_schema_conformance, checks.response_headers_conformance,
        ])
    except FailureGroup as group:
        return [f"{type(f).__name__}: {f.title} - {f.message}" for f in group.exceptions]
    return []


def exchange_problems(ex: ExchangeLike) -> list[str]:
    """Everything about one exchange that the spec does not allow (empty when it conforms)."""
    if ex.fault is not None:
        return []
    found = route(ex.method, ex.target)
    paths = load_spec()["paths"]
    if found is None or ex.method.lower() not in paths.get(found[0], {}):
        return [f"{ex.method} {ex.target}: no such operation in the spec"]
    template, params = found
    operation = paths[template][ex.method.lower()]
    problems = _request_problems(ex, operation)
    documented = operation.get("responses", {}).get(str(ex.status))
    if ex.status == 401 and documented is None:
        problems += (_error_shape_problems(ex) if _secured(operation)
                     else ["401 from an operation without security"])
    else:
        problems += _response_problems(ex, template, params)
        problems += _strict_json_problems(ex, documented)
        if 400 <= ex.status < 500 and documented is not None and ex.response_body:
            problems += _error_shape_problems(ex)
    return [f"{ex.method} {ex.target} -> {ex.status}: {p}" for p in problems]


def assert_conforms(exchanges: Iterable[ExchangeLike]) -> int:
    """Raise ``AssertionError`` listing every non-conforming exchange; the count checked."""
    checked = [ex for ex in exchanges if ex.fault is None]
    problems = [p for ex in checked for p in exchange_problems(ex)]
    assert not problems, "fake server drifted from the spec:\n" + "\n".join(problems[:20])
    return len(checked)
