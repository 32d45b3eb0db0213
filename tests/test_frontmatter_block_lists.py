"""Adding items to a block list (``key:`` then ``- item`` lines, as Obsidian's property
editor writes them) inserts item lines and keeps every other byte (SPEC §1.3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.frontmatter import parse_frontmatter, set_frontmatter_key
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.patch_targets import patch_field
from tests.capture_kit import VaultBox

GRACE = "resources/people/grace.md"
HAND_MADE = (
    "---\n"
    "type: person\n"
    "status: active\n"
    "created: 2026-01-01\n"
    "updated: 2026-01-02\n"
    "tags:\n"
    "  - person\n"
    '  - "navy"   # quoted\n'
    "aliases:\n"
    "  - Amazing Grace # nickname\n"
    "  - 'Grandma COBOL'\n"
    "---\n"
    "# Grace Hopper\n"
    "\n"
    "Admiral.\n"
)


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_capture_update_appends_alias_and_tag_lines_to_block_lists(
        tmp_path: Path, eol: str) -> None:
    box = VaultBox(tmp_path).init()
    original = HAND_MADE.replace("\n", eol)
    (box.vault / GRACE).write_bytes(original.encode())
    assert sync_paths(box.ctx(), [GRACE]).entities_put == ("grace",)

    env = box.capture("Grace Hopper", kind="person", body="Found a moth.",
                      aliases=("Grace Brewster Murray",), tags=("compilers",))

    assert env.ok and env.data.path == GRACE, env
    head = original[: original.index("# Grace Hopper")]
    body = original[len(head):]
    expected_head = (head
                     .replace("updated: 2026-01-02", "updated: 2026-03-01")
                     .replace(f'"navy"   # quoted{eol}',
                              f'"navy"   # quoted{eol}  - compilers{eol}')
                     .replace(f"'Grandma COBOL'{eol}",
                              f"'Grandma COBOL'{eol}  - Grace Brewster Murray{eol}"))
    after = (box.vault / GRACE).read_bytes().decode()
    assert after[: len(expected_head)] == expected_head
    assert after[len(expected_head):].startswith(body)  # the capture only appends its log
    fm = box.frontmatter(GRACE)
    assert fm["tags"] == ["person", "navy", "compilers"]
    assert fm["aliases"] == ["Amazing Grace", "Grandma COBOL", "Grace Brewster Murray"]


def test_adding_items_writes_them_in_the_lists_own_style_quoted_only_when_needed() -> None:
    text = "---\ntags:\n-   a   # first\n-   'b'\nnext: 1\n---\nbody\n"
    out = set_frontmatter_key(text, "tags", ["a", "b", "c, d", "yes", "x: y", "2026-01-01"])
    assert out == text.replace(
        "-   'b'\n", "-   'b'\n-   c, d\n-   \"yes\"\n-   \"x: y\"\n-   \"2026-01-01\"\n")


def test_prepending_items_inserts_them_before_the_first_item() -> None:
    text = "---\naliases: # names\n  # the usual one\n  - Ada\n---\n"
    out = patch_field(text, "aliases", "prepend", "Countess")
    assert out == text.replace("  - Ada\n", "  - Countess\n  - Ada\n")
    out = patch_field(text, "aliases", "append", "Countess")
    assert out == text.replace("  - Ada\n", "  - Ada\n  - Countess\n")


def test_items_that_are_mappings_keep_their_lines_and_comments() -> None:
    text = "---\nsources:\n  - url: https://a.example\n    title: A # main\n  - plain\nx: 1\n---\n"
    value = [{"url": "https://a.example", "title": "A"}, "plain", "new"]
    out = set_frontmatter_key(text, "sources", value)
    assert out == text.replace("  - plain\n", "  - plain\n  - new\n")
    assert parse_frontmatter(out)[0]["sources"] == value


def test_flow_lists_and_other_changes_keep_the_one_line_form() -> None:
    flow = "---\ntags: [a, b]\n---\n"
    assert set_frontmatter_key(flow, "tags", ["a", "b", "c"]) == "---\ntags: [a, b, c]\n---\n"
    block = "---\ntags:\n  - a\n  - b\n---\n"
    assert set_frontmatter_key(block, "tags", ["b", "c"]) == "---\ntags: [b, c]\n---\n"
    assert set_frontmatter_key(block, "tags", "a") == "---\ntags: a\n---\n"


def test_a_list_it_cannot_grow_line_wise_loses_no_comment() -> None:
    commented = "---\ntags:\n  -\n    a # kept\n---\n"
    with pytest.raises(EchoError, match="comments"):
        set_frontmatter_key(commented, "tags", ["a", "b"])
    bare = "---\ntags:\n  -\n    a\n---\n"
    assert set_frontmatter_key(bare, "tags", ["a", "b"]) == "---\ntags: [a, b]\n---\n"
