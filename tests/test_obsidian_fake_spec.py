"""The fake Obsidian server cannot drift from the Local REST API spec.

Three layers: (1) every exchange of every test that uses the fake is checked at teardown
(``tests/obsidian_kit.py`` -> ``tests/obsidian_spec.py``); (2) schemathesis generates
requests from the spec for each operation the backend uses and checks the fake's answers;
(3) the checker itself is shown to reject invented status codes, shapes and operations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.obsidian_fake import Exchange, FakeObsidian
from tests.obsidian_spec import (
    SPEC_PATH,
    assert_conforms,
    exchange_problems,
    schemathesis_schema,
)

KEY = "spec-key"
#: The operations ``ObsidianStorage`` calls (the fake implements these).
USED_OPERATIONS = [
    "GET /",
    "GET /vault/",
    "GET /vault/{pathToDirectory}/",
    "GET /vault/{filename}",
    "PUT /vault/{filename}",
    "POST /vault/{filename}",
    "PATCH /vault/{filename}",
    "DELETE /vault/{filename}",  # last: it removes the seeded notes
]
SEEDED = ["a.md", "notes/b.md", "notes/deep/c.md"]
SHARED_SPEC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "obsidian-openapi.yaml"


def test_vendored_spec_matches_the_shared_reference() -> None:
    if not SHARED_SPEC.exists():
        pytest.skip(f"no shared reference at {SHARED_SPEC}")
    assert SPEC_PATH.read_bytes() == SHARED_SPEC.read_bytes(), (
        "shared/reference/obsidian-openapi.yaml changed: copy it to tests/data/ and make "
        "the fake and the backend follow it"
    )


# --- (2) generated requests -----------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded_fake() -> Iterator[FakeObsidian]:
    with FakeObsidian(KEY) as fake:
        for path in SEEDED:
            fake.vault.put(path, b"---\ntags: [x]\n---\n# A\n\nbody\n")
        yield fake


@pytest.mark.parametrize("label", USED_OPERATIONS)
def test_fake_answers_generated_requests_as_the_spec_says(
    seeded_fake: FakeObsidian, label: str
) -> None:
    from schemathesis.specs.openapi import checks

    operation = schemathesis_schema().find_operation_by_label(label)
    assert operation is not None, label
    response_checks = [
        checks.status_code_conformance,
        checks.content_type_conformance,
        checks.response_schema_conformance,
        checks.response_headers_conformance,
    ]

    @settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(
        case=operation.as_strategy(),
        known=st.one_of(st.none(), st.sampled_from(SEEDED)),
        accept=st.sampled_from([None, "text/markdown", "application/vnd.olrapi.note+json"]),
    )
    def answers_per_spec(case: Any, known: str | None, accept: str | None) -> None:
        if known is not None and case.path_parameters:  # half the time: an existing note
            name = next(iter(case.path_parameters))
            case.path_parameters[name] = known if name == "filename" else known.rpartition("/")[0]
        if accept is not None:
            case.headers = {**(case.headers or {}), "Accept": accept}
        response = case.call(
            base_url=seeded_fake.base_url, headers={"Authorization": f"Bearer {KEY}"},
            timeout=5,
        )
        case.validate_response(response, checks=response_checks)

    answers_per_spec()


# --- (3) the checker catches drift ------------------------------------------------------------


def _ok(method: str, target: str, status: int, body: object = b"",
        media: str | None = None, request: bytes = b"", request_media: str = "") -> Exchange:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": media} if media else {}
    request_headers = {"authorization": "Bearer k"}
    if request_media:
        request_headers["content-type"] = request_media
    return Exchange(method, target, request_headers, request, status, headers, payload)


GOOD = [
    _ok("GET", "/", 200, {"ok": "OK", "authenticated": True}, "application/json"),
    _ok("GET", "/vault/", 200, {"files": ["a.md", "sub/"]}, "application/json"),
    _ok("GET", "/vault/sub/", 404, {"errorCode": 40400, "message": "no"}, "application/json"),
    _ok("GET", "/vault/a.md", 200, b"# A\n", "text/markdown; charset=utf-8"),
    _ok("GET", "/vault/a.md", 404, {"errorCode": 40400, "message": "no"}, "application/json"),
    _ok("PUT", "/vault/a.md", 204, request=b"x", request_media="text/markdown"),
    _ok("DELETE", "/vault/a.md?permanent=true", 204),
    _ok("GET", "/vault/a.md", 401, {"errorCode": 40101, "message": "key"}, "application/json"),
]


def test_checker_accepts_conforming_exchanges() -> None:
    assert assert_conforms(GOOD) == len(GOOD)


@pytest.mark.parametrize(
    ("exchange", "problem"),
    [
        (_ok("GET", "/vault/a.md", 418, b"teapot", "text/plain"), "418"),
        (_ok("GET", "/vault/", 200, {"entries": []}, "application/json"), "entries"),
        (_ok("GET", "/vault/", 200, {"files": [1]}, "application/json"), "files"),
        (_ok("GET", "/vault/a.md", 200, {"path": "a.md"},
             "application/vnd.olrapi.note+json"), "required"),
        (_ok("GET", "/vault/a.md", 200, b"<x/>", "application/xml"), "application/xml"),
        (_ok("GET", "/vault/a.md", 404, {"error": "no"}, "application/json"), "errorCode"),
        (_ok("PUT", "/vault/a.md", 201), "201"),
        (_ok("DELETE", "/vault/a.md", 400, {"errorCode": 1, "message": "x"},
             "application/json"), "400"),
        (_ok("GET", "/vault/a.md", 401, {"message": "key"}, "application/json"), "errorCode"),
        (_ok("POST", "/vault/", 204), "no such operation"),
        (_ok("GET", "/search/", 200), "no such operation"),
        (_ok("DELETE", "/vault/a.md?permanent=maybe", 204), "permanent"),
        (_ok("PATCH", "/vault/a.md", 200, b"x", "text/markdown",
             request=b'{"operation": "explode"}', request_media="application/json"), "request"),
        (_ok("POST", "/vault/a.md", 204, request=b"x", request_media="application/pdf"),
         "media type"),
    ],
)
def test_checker_rejects_what_the_spec_does_not_have(exchange: Exchange, problem: str) -> None:
    problems = exchange_problems(exchange)
    assert problems, f"accepted {exchange}"
    assert any(problem in p for p in problems), problems


def test_injected_faults_are_not_held_against_the_fake() -> None:
    broken = replace(_ok("GET", "/vault/a.md", 503, b"", None), fault="status")
    assert exchange_problems(broken) == []
