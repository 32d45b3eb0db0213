"""Claude Code's own memory as proposals (issue 17 item 6; ``echo_core.ops.claude_memory``
and ``reflect claude-memory``): CLAUDE.md (user and project) and the auto-memory
MEMORY.md with its topic files are found where Claude Code keeps them, their bullets
become semantic proposals (headings as tags, confidence by wording), what is not a
memory is skipped, the files are never changed, and a second apply changes nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from echo_core.ops.claude_memory import (
    HIGH,
    LOW,
    MEDIUM,
    find_memory_files,
    memory_proposals,
    project_key,
    read_bullets,
)
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

USER_MD = """# Personal preferences

- Always answer in British English.
- I prefer small commits with a one-line summary.
"""

PROJECT_MD = """---
description: the app
---
# App

@docs/conventions.md

## Testing
- Use pytest, not unittest.
- Run the suite with `pytest -n 2`
  before every push.
- pytest-xdist

```bash
- not a bullet: code
```

<!-- - a commented-out rule
     - still a comment -->
## Ideas
- Maybe try hypothesis for the parser?
"""

DOT_CLAUDE_MD = """# Style
* Never use print for logging in library code.
"""

MEMORY_MD = """# Memory index

- [Debugging](debugging.md) — how the flaky test was fixed
- The staging database is reset every night.
- Always use pytest, not unittest.
"""

DEBUGGING_MD = """# Debugging

1. The flaky upload test needs the fake clock; **never** sleep in tests.
- [ ] Check the retry budget.
"""


def memory_layout(root: Path) -> tuple[Path, Path]:
    """``(project, claude_home)`` with every kind of memory file."""
    home, project = root / "home", root / "src" / "my_app"
    claude = home / ".claude"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "CLAUDE.md").write_text(PROJECT_MD, encoding="utf-8")
    (project / ".claude" / "CLAUDE.md").write_text(DOT_CLAUDE_MD, encoding="utf-8")
    claude.mkdir(parents=True)
    (claude / "CLAUDE.md").write_text(USER_MD, encoding="utf-8")
    auto = claude / "projects" / project_key(project) / "memory"
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (auto / "debugging.md").write_text(DEBUGGING_MD, encoding="utf-8")
    return project, claude


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        h.update(str(path).encode())
        if path.is_file():
            h.update(path.read_bytes() + str(path.stat().st_mtime_ns).encode())
    return h.hexdigest()


def test_project_key_replaces_every_non_alphanumeric_character() -> None:
    assert project_key(Path("/home/ada/src/my_app.v2")) == "-home-ada-src-my-app-v2"


def test_memory_files_are_found_where_claude_code_keeps_them(tmp_path: Path) -> None:
    project, claude = memory_layout(tmp_path)
    found = [(f.path.name, f.scope) for f in find_memory_files(project, claude)]
    assert found == [("CLAUDE.md", "user"), ("CLAUDE.md", "project"), ("CLAUDE.md", "project"),
                     ("MEMORY.md", "auto"), ("debugging.md", "auto")]


def test_auto_memory_of_a_sub_folder_is_its_git_roots(tmp_path: Path) -> None:
    project, claude = memory_layout(tmp_path)
    (project / "pkg").mkdir()
    names = [f.path.name for f in find_memory_files(project / "pkg", claude)]
    assert names == ["CLAUDE.md", "MEMORY.md", "debugging.md"]


def test_bullets_become_proposals_with_headings_as_tags_and_confidence_by_wording(
        tmp_path: Path) -> None:
    project, claude = memory_layout(tmp_path)
    files = find_memory_files(project, claude)
    proposals, origins = memory_proposals(files, str(tmp_path / "home"))
    got = [(p["title"], p["confidence"], p["tags"]) for p in proposals]  # type: ignore[index]
    assert got == [
        ("Always answer in British English.", HIGH, ["claude-memory", "personal-preferences"]),
        ("I prefer small commits with a one-line summary.", HIGH,
         ["claude-memory", "personal-preferences"]),
        ("Use pytest, not unittest.", HIGH, ["claude-memory", "app", "testing"]),
        ("Run the suite with pytest -n 2 before every push.", MEDIUM,
         ["claude-memory", "app", "testing"]),
        ("Testing: pytest-xdist", MEDIUM, ["claude-memory", "app", "testing"]),
        ("Maybe try hypothesis for the parser?", LOW, ["claude-memory", "app", "ideas"]),
        ("Never use print for logging in library code.", HIGH, ["claude-memory", "style"]),
        ("The staging database is reset every night.", MEDIUM,
         ["claude-memory", "memory-index"]),
        ("Always use pytest, not unittest.", HIGH, ["claude-memory", "memory-index"]),
        ("The flaky upload test needs the fake clock; never sleep in tests.", HIGH,
         ["claude-memory", "debugging"]),
        ("Check the retry budget.", MEDIUM, ["claude-memory", "debugging"]),
    ]
    first = proposals[0]
    assert first["kind"] == "semantic" and first["sources"] == ["~/.claude/CLAUDE.md"]  # type: ignore[index]
    assert proposals[3]["body"] == "Run the suite with `pytest -n 2` before every push."  # type: ignore[index]
    origin = origins[2]
    assert origin is not None and origin.rationale.startswith("project memory ")
    assert "under App > Testing" in origin.rationale


def test_the_same_bullet_in_two_files_is_one_proposal(tmp_path: Path) -> None:
    home = tmp_path / ".claude"
    home.mkdir()
    (home / "CLAUDE.md").write_text("- Use uv for environments.\n", encoding="utf-8")
    project = tmp_path / "p"
    project.mkdir()
    (project / "CLAUDE.md").write_text("## Tools\n- use uv for environments\n", encoding="utf-8")
    proposals, origins = memory_proposals(find_memory_files(project, home))
    assert len(proposals) == 1
    assert proposals[0]["sources"] == [str(home / "CLAUDE.md"), str(project / "CLAUDE.md")]  # type: ignore[index]
    assert origins[0] is not None and origins[0].occurrences == 2


@pytest.mark.parametrize("text", ["", "```\n- a\n", "<!-- - x\n", "#\n-\n- \n* ***\n",
                                  "- [x](a.md)\n", "\x00\ufffd- ok?\n" * 3, "- " + "w " * 5000])
def test_hostile_memory_text_never_crashes(text: str) -> None:
    bullets = list(read_bullets(text))
    assert all(b.text for b in bullets)


def run(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        *args: str) -> CliRun:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    return run_main(["reflect", "claude-memory", "--vault", str(box.vault), "--state-dir",
                     str(box.state), *args], capsys, monkeypatch)


def test_reflect_claude_memory_previews_applies_once_and_never_edits_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path / "v").init()
    project, claude = memory_layout(tmp_path)
    sources = digest(tmp_path / "home") + digest(project)
    before = box.tree_digest()
    preview = run(box, capsys, monkeypatch, str(project), "--claude-home", str(claude),
                  "--json")
    assert preview.code == 0, preview.err
    items = json.loads(preview.out)["items"]
    assert len(items) == 11
    assert [i["classification"] for i in items].count("inbox") == 1
    assert box.tree_digest() == before
    applied = run(box, capsys, monkeypatch, str(project), "--claude-home", str(claude),
                  "--apply", "--json")
    assert applied.code == 0, applied.err
    outcomes = {i["title"]: i["classification"] for i in json.loads(applied.out)["items"]}
    assert list(outcomes.values()).count("created") == 9
    assert outcomes["Maybe try hypothesis for the parser?"] == "inbox"
    # the auto-memory repeats the project's rule in other words: the gate stops it
    assert outcomes["Always use pytest, not unittest."] == "gated"
    note = box.read("_agent/memory/semantic/use-pytest-not-unittest.md")
    assert "claude-memory" in box.frontmatter(
        "_agent/memory/semantic/use-pytest-not-unittest.md")["tags"]
    assert "Use pytest, not unittest." in note
    after = box.tree_digest()
    again = run(box, capsys, monkeypatch, str(project), "--claude-home", str(claude), "--apply",
                "--json")
    assert {i["classification"] for i in json.loads(again.out)["items"]} == {
        "unchanged", "gated"}
    assert box.tree_digest() == after
    assert digest(tmp_path / "home") + digest(project) == sources


def test_reflect_claude_memory_with_no_files_does_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path / "v").init()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run(box, capsys, monkeypatch, str(empty), "--claude-home", str(tmp_path / "none"))
    assert result.code == 0
    assert "no memory files" in result.out and "No proposals" in result.out
