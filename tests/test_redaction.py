"""``echo_core.redaction`` by itself (SPEC §2.1): every secret shape of the table becomes
its marker, every look-alike comes out byte for byte, ``<private>`` blocks go.

The writes that apply it (capture, checkpoints) are pinned in ``test_redaction_writes.py``.
"""

from __future__ import annotations

import pytest

from echo_core.redaction import PRIVATE, RULES, redact, strip_private
from tests.secret_kit import LOOKALIKES, SECRETS, SecretRow


def test_the_table_holds_at_least_20_secrets_and_20_look_alikes() -> None:
    assert len(SECRETS) >= 20 and len(LOOKALIKES) >= 20
    # every rule of the module has a row, and every row names a rule of the module
    assert {row.rule for row in SECRETS} == {rule.name for rule in RULES}


@pytest.mark.parametrize("row", SECRETS, ids=lambda row: row.rule)
def test_a_secret_becomes_its_marker_and_the_text_around_it_stays(row: SecretRow) -> None:
    result = redact(row.text)
    assert row.secret not in result.text
    assert row.marker in result.text
    for kept in row.kept:
        assert kept in result.text
    assert result.found == (row.rule,)
    assert result.changed


@pytest.mark.parametrize("text", LOOKALIKES)
def test_a_look_alike_survives_byte_for_byte(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.found == ()
    assert not result.changed


def test_secrets_among_look_alikes_in_one_text() -> None:
    text = "\n".join(line for pair in zip(LOOKALIKES, (r.text for r in SECRETS), strict=False)
                     for line in pair)
    result = redact(text)
    for row in SECRETS[:len(LOOKALIKES)]:
        assert row.secret not in result.text, row.rule
    for look in LOOKALIKES[:len(SECRETS)]:
        assert look in result.text
    assert set(result.found) == {row.rule for row in SECRETS[:len(LOOKALIKES)]}


@pytest.mark.parametrize("row", SECRETS, ids=lambda row: row.rule)
def test_redacting_twice_changes_nothing_more(row: SecretRow) -> None:
    once = redact(row.text)
    twice = redact(once.text)
    assert twice.text == once.text and twice.found == ()


def test_a_secret_next_to_punctuation_and_quotes_is_still_found() -> None:
    key = SECRETS[1].secret
    for text in (f"({key})", f'"{key}"', f"'{key}',", f"`{key}`", f"<{key}>", f"{key}."):
        assert key not in redact(text).text, text


def test_found_lists_each_rule_once_in_table_order() -> None:
    text = f"{SECRETS[-2].text}\n{SECRETS[0].text}\n{SECRETS[0].text}\n<private>x</private>"
    assert redact(text).found == (PRIVATE, "pem-private-key", "openai-key")


# --- <private> ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("a <private>secret</private> b", "a  b"),
    ("a <PRIVATE>one\ntwo\nthree</Private> b", "a  b"),
    ("keep\n<private>\nline 1\nline 2\n</private>\nkeep too", "keep\n\nkeep too"),
    ("a < private >x</ private > b", "a  b"),
    ("before <private>never closed\nmore lines", "before "),
    ("x <private>a <private>b</private> still private</private> y", "x  y"),
    ("stray </private> close", "stray  close"),
    ("two <private>1</private> and <private>2</private> end", "two  and  end"),
    ("<privateer> and private notes", "<privateer> and private notes"),
    ("no tags at all", "no tags at all"),
])
def test_strip_private_drops_the_blocks(text: str, expected: str) -> None:
    assert strip_private(text) == expected


def test_redact_drops_private_blocks_and_says_so() -> None:
    result = redact("plan <private>my diary, PASSWORD=hunter2</private> done")
    assert result.text == "plan  done"
    assert result.found == (PRIVATE,)


def test_a_secret_hidden_in_an_unclosed_private_block_goes_with_it() -> None:
    result = redact(f"note <private>{SECRETS[0].text}")
    assert result.text == "note " and result.found == (PRIVATE,)


# --- env-style assignments --------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "API_KEY=abc123xyz", "export GITHUB_TOKEN=abcdef123456", "db_password = 'p a s s'",
    'SECRET="two words"', "apikey: 0123abcd", "MY_CREDENTIALS=user-pass-99",
    "AUTH_KEY=Zz1", "passphrase: open sesame",
])
def test_an_assignment_whose_name_says_secret_loses_its_value(text: str) -> None:
    result = redact(text)
    assert result.found == ("env-secret",)
    name = text.split("=")[0].split(":")[0]
    assert result.text.startswith(name)
    assert "[REDACTED:env-secret]" in result.text


@pytest.mark.parametrize("text", [
    "TOKEN=", "PASSWORD=${DB_PASSWORD}", "API_KEY=$API_KEY", "SECRET=true", "PASSWORD=****",
    "TOKEN=1234", "PRIMARY_KEY=id", "CACHE_KEY=user", "max_tokens=1000", "password_hash=x",
])
def test_an_assignment_without_a_secret_value_survives(text: str) -> None:
    assert redact(text).text == text
