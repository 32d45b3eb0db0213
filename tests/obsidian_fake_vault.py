"""The in-memory vault behind the fake Obsidian Local REST API (``tests/obsidian_fake.py``).

Files are bytes keyed by vault path; folders exist implicitly (the real API never lists
empty folders either). Timestamps are milliseconds since the epoch, as Obsidian reports
them. ``patch`` implements the subset of the 5.x PATCH instruction algebra the tests use:
``heading`` targets (replace / prepend / append / delete of the section body, with
``createTargetIfMissing`` for a missing last level) and ``frontmatter`` targets
(replace / append / prepend / delete of a key's value). Anything else is a ``PatchError``
with a status the spec documents (400 / 404 / 412).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from typing import Any

import yaml

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")


class PatchError(Exception):
    """A PATCH the fake refuses: ``status`` (documented by the spec), ``code``, message."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _now_ms() -> int:
    return int(time.time() * 1000)


def content_version(data: bytes) -> str:
    """The document ``version`` token (content hash) that ``ifMatch`` is compared with."""
    return hashlib.sha256(data).hexdigest()[:12]


class FakeVault:
    """Thread-safe in-memory files: ``{path: (data, ctime_ms, mtime_ms)}``."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, int, int]] = {}
        self.guard = threading.Lock()

    # --- queries (callers hold no lock; each method takes it) ------------------------

    def get(self, path: str) -> tuple[bytes, int, int] | None:
        with self.guard:
            return self.files.get(path)

    def is_folder(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        with self.guard:
            return any(name.startswith(prefix) for name in self.files)

    def parent_is_file(self, path: str) -> bool:
        parts = path.split("/")
        with self.guard:
            return any("/".join(parts[:i]) in self.files for i in range(1, len(parts)))

    def listing(self, folder: str) -> list[str] | None:
        """Entries directly in ``folder`` (``"name"`` / ``"sub/"``); ``None`` if no folder."""
        prefix = f"{folder}/" if folder else ""
        entries: set[str] = set()
        with self.guard:
            for name in self.files:
                if name.startswith(prefix):
                    rest = name[len(prefix) :]
                    head, sep, _ = rest.partition("/")
                    entries.add(head + "/" if sep else head)
        if not entries and folder:
            return None
        return sorted(entries)

    # --- changes ----------------------------------------------------------------------

    def put(self, path: str, data: bytes) -> None:
        now = _now_ms()
        with self.guard:
            old = self.files.get(path)
            self.files[path] = (data, old[1] if old else now, now)

    def append(self, path: str, data: bytes) -> None:
        now = _now_ms()
        with self.guard:
            old = self.files.get(path)
            if old is None:
                self.files[path] = (data, now, now)
            else:
                self.files[path] = (old[0] + data, old[1], now)

    def delete(self, path: str) -> bool:
        with self.guard:
            return self.files.pop(path, None) is not None

    def patch(self, path: str, instruction: dict[str, Any]) -> bytes:
        """Apply ``instruction`` (already schema-valid) to ``path``; the new content."""
        with self.guard:
            entry = self.files.get(path)
            if entry is None:
                raise PatchError(404, 40400, f"File {path} does not exist")
            if_match = instruction.get("ifMatch")
            if if_match is not None and if_match.strip('"') != content_version(entry[0]):
                raise PatchError(412, 41200, "The document changed since that version")
            text = entry[0].decode("utf-8")
            kind = instruction["targetType"]
            if instruction.get("scope", "content") != "content" or "within" in instruction:
                raise PatchError(400, 40000, "The fake supports only the content scope")
            if kind == "heading":
                new = _patch_heading(text, instruction)
            elif kind == "frontmatter":
                new = _patch_frontmatter(text, instruction)
            else:
                raise PatchError(400, 40000, f"The fake does not support {kind} targets")
            data = new.encode("utf-8")
            self.files[path] = (data, entry[1], _now_ms())
            return data


def _payload_text(instruction: dict[str, Any]) -> str:
    content = instruction.get("content")
    if not isinstance(content, str):
        raise PatchError(400, 40000, "A heading patch carries its payload in `content`")
    return content.strip("\n")


def _sections(lines: list[str]) -> list[tuple[int, int, str]]:
    """``(line index, level, text)`` of every heading outside code fences."""
    found: list[tuple[int, int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            found.append((index, len(match.group(1)), match.group(2)))
    return found


def _find_heading(lines: list[str], target: list[str]) -> tuple[int, int, int] | None:
    """``(heading line, body end line, level)`` of the heading path ``target``."""
    heads = _sections(lines)
    start, end, level, depth = -1, len(lines), 0, 0
    for name in target:
        match = next(
            (h for h in heads if start < h[0] < end and h[2] == name and h[1] > level), None
        )
        if match is None:
            return None
        start, level = match[0], match[1]
        end = next((h[0] for h in heads if h[0] > start and h[1] <= level), len(lines))
        depth += 1
    return (start, end, level) if depth else None


def _patch_heading(text: str, instruction: dict[str, Any]) -> str:
    target = instruction.get("target")
    if not isinstance(target, list) or not target:
        raise PatchError(400, 40000, "A heading target is a non-empty array of heading texts")
    lines = text.split("\n")
    found = _find_heading(lines, target)
    operation = instruction["operation"]
    if found is None:
        parent = _find_heading(lines, target[:-1]) if len(target) > 1 else None
        if not instruction.get("createTargetIfMissing") or (len(target) > 1 and parent is None):
            raise PatchError(404, 40461, f"Heading {target!r} does not exist")
        at = parent[1] if parent else len(lines)
        level = (parent[2] if parent else 0) + 1
        while at > 0 and lines[at - 1] == "":
            at -= 1
        lines[at:at] = ([""] if at else []) + [f"{'#' * level} {target[-1]}"]
        found = _find_heading(lines, target)
        assert found is not None
    head, end, _ = found
    body = lines[head + 1 : end]
    gap: list[str] = []
    while body and body[-1] == "":
        gap.insert(0, body.pop())
    lead = [] if not body or body[0] != "" else [""]
    core = body[len(lead) :]
    payload = [] if operation == "delete" else _payload_text(instruction).split("\n")
    if operation == "append":
        core = core + ([""] if core else []) + payload
    elif operation == "prepend":
        core = payload + ([""] if core else []) + core
    else:  # replace / delete
        core = payload
    if not gap and end < len(lines):
        gap = [""]
    lines[head + 1 : end] = lead + core + (gap or ([""] if end == len(lines) else []))
    return "\n".join(lines)


def _patch_frontmatter(text: str, instruction: dict[str, Any]) -> str:
    key = instruction.get("target")
    if not isinstance(key, str) or not key:
        raise PatchError(400, 40000, "A frontmatter target is the key name")
    match = re.match(r"\A---\n(.*?\n)?---\n", text, re.DOTALL)
    data: dict[str, Any] = {}
    if match:
        try:
            loaded = yaml.safe_load(match.group(1) or "") or {}
        except yaml.YAMLError:
            raise PatchError(400, 40000, "The frontmatter is not valid YAML") from None
        if not isinstance(loaded, dict):
            raise PatchError(400, 40000, "The frontmatter is not a mapping")
        data = loaded
    body = text[match.end() :] if match else text
    operation = instruction["operation"]
    if key not in data and not (instruction.get("createTargetIfMissing") and operation != "delete"):
        raise PatchError(404, 40462, f"Frontmatter field {key!r} does not exist")
    value = instruction["value"] if "value" in instruction else instruction.get("content")
    if operation == "delete":
        del data[key]
    elif operation == "replace" or key not in data:
        data[key] = value
    else:
        old = data[key]
        if isinstance(old, list) and isinstance(value, list):
            data[key] = old + value if operation == "append" else value + old
        elif isinstance(old, dict) and isinstance(value, dict):
            data[key] = {**old, **value} if operation == "append" else {**value, **old}
        elif isinstance(old, str) and isinstance(value, str):
            data[key] = old + value if operation == "append" else value + old
        else:
            raise PatchError(400, 40000, f"Cannot merge {type(value).__name__} into {key!r}")
    dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else ""
    return f"---\n{dumped}---\n{body}"
