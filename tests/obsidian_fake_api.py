"""The request handling of the fake Obsidian Local REST API (``tests/obsidian_fake.py``):
routes, auth, status codes and bodies as ``tests/data/obsidian-openapi.yaml`` documents
them, on top of the in-memory ``FakeVault``.

Routes: ``GET /`` (no auth), ``GET /vault/`` and ``GET /vault/{dir}/`` (listings),
``GET/PUT/POST/PATCH/DELETE /vault/{filename}``. Anything else is a 404 error. Paths are
decoded one segment at a time (an encoded ``%2F`` never becomes a separator). PATCH takes
the 5.x JSON instruction body only (validated against the spec's ``PatchInstruction``);
raw-content mode and sub-document URL targets are refused with 400.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import yaml

from tests.obsidian_fake_vault import FakeVault, PatchError
from tests.obsidian_spec import patch_instruction_errors

Reply = tuple[int, dict[str, str], bytes]
JSON = "application/json"
MARKDOWN = "text/markdown; charset=utf-8"
NOTE_JSON = "application/vnd.olrapi.note+json"


def error(status: int, code: int, message: str) -> Reply:
    """An API error reply: ``{"errorCode", "message"}`` as JSON."""
    body = json.dumps({"errorCode": code, "message": message}).encode()
    return status, {"Content-Type": JSON}, body


def _vault_path(raw: str) -> str | None:
    """The decoded vault path of ``raw`` (segments decoded one by one); None if invalid."""
    parts = raw.split("/")
    try:
        decoded = [unquote(part, errors="strict") for part in parts]
    except UnicodeDecodeError:
        return None
    if any(p in ("", ".", "..") or "/" in p or "\x00" in p for p in decoded):
        return None
    return "/".join(decoded)


class FakeApi:
    """Answers well-formed requests (faults are the server's business)."""

    def __init__(self, api_key: str, vault: FakeVault) -> None:
        self.api_key = api_key
        self.vault = vault

    # --- the API ----------------------------------------------------------------------

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        """The reply to one well-formed request (no faults)."""
        path, _, query = target.partition("?")
        if method == "GET" and path == "/":
            return self._info(headers)
        if not path.startswith("/vault/"):
            return error(404, 40400, f"Not Found: {path}")
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return error(
                401, 40101, "Authorization required. Find your API Key in the 'Local REST "
                "API' section of your Obsidian settings.",
            )
        version = headers.get("markdown-patch-version")
        if version is not None and version not in ("1", "2"):
            return error(400, 40012, "InvalidPatchVersionHeader: use 1 or 2")
        rest = path[len("/vault/") :]
        if method == "GET" and (rest == "" or rest.endswith("/")):
            return self._listing(rest.rstrip("/"))
        if method != "PATCH" and ("target-type" in headers or "target" in headers):
            return error(400, 40013, "HeaderTargetingRequiresVersion1: use URL path targeting")
        handlers: dict[str, Callable[[str | None, dict[str, str], bytes, str], Reply]] = {
            "GET": self._get, "PUT": self._put, "POST": self._post,
            "DELETE": self._delete, "PATCH": self._patch,
        }
        handler = handlers.get(method)
        if handler is None:
            return error(405, 40500, f"Method {method} not allowed")
        return handler(_vault_path(rest), headers, body, query)

    def _info(self, headers: dict[str, str]) -> Reply:
        info = {
            "ok": "OK",
            "service": "Obsidian Local REST API",
            "authenticated": headers.get("authorization") == f"Bearer {self.api_key}",
            "versions": {"obsidian": "1.8.10", "self": "5.0.0"},
        }
        return 200, {"Content-Type": JSON}, json.dumps(info).encode()

    def _listing(self, raw: str) -> Reply:
        folder = _vault_path(raw) if raw else ""
        files = None if folder is None else self.vault.listing(folder)
        if files is None:
            return error(404, 40400, f"Directory {raw!r} does not exist")
        return 200, {"Content-Type": JSON}, json.dumps({"files": files}).encode()

    def _get(self, path: str | None, headers: dict[str, str], body: bytes, query: str) -> Reply:
        entry = None if path is None else self.vault.get(path)
        if path is None or entry is None:
            return error(404, 40400, "File does not exist")
        data, ctime, mtime = entry
        if NOTE_JSON not in headers.get("accept", ""):
            return 200, {"Content-Type": MARKDOWN}, data
        text = data.decode("utf-8", errors="replace")
        frontmatter: Any = {}
        if text.startswith("---\n") and "\n---\n" in text[3:]:
            try:
                frontmatter = yaml.safe_load(text[4 : text.index("\n---\n", 3)]) or {}
            except yaml.YAMLError:
                frontmatter = {}
        note = {
            "content": text, "path": path,
            "frontmatter": frontmatter if isinstance(frontmatter, dict) else {},
            "stat": {"ctime": ctime, "mtime": mtime, "size": len(data)},
            "tags": [], "links": [], "backlinks": [], "unresolvedLinks": [],
        }
        return 200, {"Content-Type": NOTE_JSON}, json.dumps(note, default=str).encode()

    def _writable(self, path: str | None) -> Reply | None:
        if path is None:
            return error(400, 40001, "Incoming file could not be processed: bad file name")
        if self.vault.is_folder(path):
            return error(405, 40510, "Your path references a directory instead of a file")
        if self.vault.parent_is_file(path):
            return error(400, 40002, "Incoming file could not be processed: parent is a file")
        return None

    def _put(self, path: str | None, headers: dict[str, str], body: bytes, query: str) -> Reply:
        refused = self._writable(path)
        if refused is not None or path is None:
            return refused or error(400, 40001, "Incoming file could not be processed")
        self.vault.put(path, body)
        return 204, {}, b""

    def _post(self, path: str | None, headers: dict[str, str], body: bytes, query: str) -> Reply:
        refused = self._writable(path)
        if refused is not None or path is None:
            return refused or error(400, 40001, "Incoming file could not be processed")
        self.vault.append(path, body)
        return 204, {}, b""

    def _delete(self, path: str | None, headers: dict[str, str], body: bytes, query: str) -> Reply:
        if path is not None and self.vault.is_folder(path):
            return error(405, 40510, "Your path references a directory instead of a file")
        if path is None or not self.vault.delete(path):
            return error(404, 40400, "File does not exist")
        return 204, {}, b""

    def _patch(self, path: str | None, headers: dict[str, str], body: bytes, query: str) -> Reply:
        if "target-type" in headers or "target" in headers:
            if headers.get("markdown-patch-version") is None:
                return error(400, 40014, "PatchHeaderTargetingRequiresExplicitVersion")
            return error(400, 40015, "The fake supports only JSON instruction bodies")
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if media not in (JSON, "application/vnd.olrapi.patch-instruction+json"):
            return error(400, 40016, "InvalidPatchInstruction: send a JSON instruction body")
        try:
            instruction = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return error(400, 40016, "InvalidPatchInstruction: the body is not JSON")
        problems = patch_instruction_errors(instruction)
        if problems:
            return error(400, 40016, "InvalidPatchInstruction: " + "; ".join(problems))
        if path is None:
            return error(404, 40400, "File does not exist")
        if self.vault.is_folder(path):
            return error(405, 40510, "Your path references a directory instead of a file")
        try:
            data = self.vault.patch(path, instruction)
        except PatchError as exc:
            return error(exc.status, exc.code, exc.message)
        return 200, {"Content-Type": MARKDOWN}, data
