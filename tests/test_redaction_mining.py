"""The redaction table through transcript mining (SPEC §2.1, §4.4): a preference stated
with a secret in it is mined with the marker, never the secret; with a look-alike, it is
mined with the look-alike intact; ``<private>`` text never leaves the miner.
"""

from __future__ import annotations

import pytest

from echo_core.ops.transcript_mining import MinedProposal, mine_transcript
from tests.secret_kit import LOOKALIKES, SECRETS, SecretRow
from tests.transcript_kit import prompt_session


def _fields(mined: MinedProposal) -> str:
    return "\n".join([mined.title, mined.body, mined.rationale, *mined.excerpts,
                      str(mined.to_proposal())])


def _mine(prompts: list[str]) -> list[MinedProposal]:
    return mine_transcript(prompt_session("sess-red", prompts).splitlines(), source="sess-red")


@pytest.mark.parametrize("row", SECRETS, ids=lambda row: row.rule)
def test_a_mined_preference_holds_the_marker_not_the_secret(row: SecretRow) -> None:
    mined = _mine([f"Always use {row.text} for the deploy."])
    assert mined, "the preference rule did not fire"
    text = "\n".join(_fields(m) for m in mined)
    assert row.secret not in text
    for line in row.secret.splitlines()[1:]:  # not one line of a key block either
        assert line not in text
    if "\n" not in row.text:  # a multi-line text: the rule keeps its first line only
        assert row.marker in text


def test_mined_look_alikes_survive_verbatim() -> None:
    mined = _mine([f"Always keep {look} in the notes." for look in LOOKALIKES])
    text = "\n".join(_fields(m) for m in mined)
    kept = [look for look in LOOKALIKES if look in text]
    assert kept == list(LOOKALIKES), set(LOOKALIKES) - set(kept)
    assert "[REDACTED:" not in text


def test_private_text_in_a_prompt_is_never_mined() -> None:
    mined = _mine(["Always use <private>my-diary-entry</private> pytest for tests.",
                   "Never <private>salary-figure-77 push to main"])
    text = "\n".join(_fields(m) for m in mined)
    assert "my-diary-entry" not in text and "salary-figure-77" not in text
    assert any("pytest" in m.title for m in mined)
