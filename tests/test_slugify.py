"""Slugs (SPEC §1.4, §2.1): letters of every script are kept, Latin folds to ASCII, the
slug is cut at a word boundary within 80 characters and 150 UTF-8 bytes, and every slug
makes a note name the write scope accepts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.names import SLUG_MAX_BYTES, slugify
from echo_core.write_scope import require_note_path
from tests.capture_kit import VaultBox


@pytest.mark.parametrize(("title", "slug"), [
    ("Vantage Systems, Inc.", "vantage-systems-inc"),
    ("Café Müller", "cafe-muller"),
    ("Москва встречи", "москва-встречи"),
    ("東京 会議", "東京-会議"),
    ("がぎ ぐ", "がぎ-ぐ"),  # the voicing marks stay (か is not が)
    ("नमस्ते दुनिया", "नमस्ते-दुनिया"),  # vowel signs and virama belong to their word
    ("Ærø Øst", "ærø-øst"),
    ("Ada \x1b[31m\u202eLovelace\x07", "ada-31m-lovelace"),
    ("Con", "con-note"),  # a Windows device name
    ("README", "readme-note"),  # not the folder's README.md (recall leaves those out)
    ("NUL", "nul-note"),
])
def test_slugify_keeps_letters_of_every_script(title: str, slug: str) -> None:
    assert slugify(title) == slug


@pytest.mark.parametrize("title", ["!!!", "🎉", "— …", "\u200d\ufe0f"])
def test_a_title_naming_nothing_is_refused(title: str) -> None:
    with pytest.raises(EchoError) as refused:
        slugify(title)
    assert refused.value.code == 2 and "no letter or digit" in refused.value.message


def test_slugify_cuts_at_a_word_boundary_within_chars_and_bytes() -> None:
    assert slugify("word " * 30) == "-".join(["word"] * 16)  # 79 characters
    cjk = slugify("東京会議 " * 60)
    assert len(cjk.encode("utf-8")) <= SLUG_MAX_BYTES and cjk.split("-") == ["東京会議"] * 11
    one_word = slugify("東" * 300)
    assert len(one_word.encode("utf-8")) <= SLUG_MAX_BYTES and set(one_word) == {"東"}
    assert slugify("x" * 300) == "x" * 80
    assert slugify("東京会議 " * 60) == cjk  # deterministic


def test_every_slug_is_a_writable_note_name() -> None:
    alphabet = ("aZ09 -_.,:;*?\"<>|/\\\t\n\r\x00\x1b\x07\x7f\x85\x9b\u202e\u2066\u200f"
                "\u0301\u0308éßæ東京がगनमस्तेМосква\U0001f600\u200d\ufe0f")
    rng = random.Random(11)
    for _ in range(1000):
        title = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200)))
        if not any(c.isalnum() for c in title):
            continue  # names nothing: refused (test_a_title_naming_nothing_is_refused)
        slug = slugify(title)
        for name in (slug, f"2026-03-01-{slug}-99"):
            try:
                require_note_path(f"resources/people/{name}.md")
            except EchoError as refused:  # pragma: no cover - the failure report
                pytest.fail(f"slug {slug!r} of {title!r} is refused: {refused.message}")


def test_capture_of_a_long_non_latin_title_creates_a_note(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    title = " ".join(["Встреча"] * 25)  # 199 characters, 350 bytes
    env = box.capture(title, kind="person", body="Обсудили планы.")
    assert env.action == "created", env
    name = env.data.path.rsplit("/", 1)[1]
    assert name.startswith("встреча-") and len(name.encode("utf-8")) <= 200
    assert (box.vault / env.data.path).is_file()
    again = box.capture(title, kind="person", body="Ещё раз.")
    assert again.action == "updated" and again.data.path == env.data.path
