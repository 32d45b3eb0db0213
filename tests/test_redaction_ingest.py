"""The redaction table through ingest (SPEC §2.1): a document holding every secret shape
and every look-alike is ingested with markers in its notes, never the secrets, the
look-alikes intact and no ``<private>`` text; redaction runs before the text is cut into
parts, so no part keeps a fragment of a secret.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.ingest import ingest
from tests.capture_kit import VaultBox
from tests.secret_kit import LOOKALIKES, SECRETS

CLOSED = tuple(row for row in SECRETS if not row.text.startswith("truncated:"))
PRIVATE_WORDS = ("my-diary-entry", "salary-figure-77")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def _document(tmp_path: Path, suffix: str, body: str) -> Path:
    path = tmp_path / f"runbook{suffix}"
    path.write_text(body, encoding="utf-8")
    return path


def _disk(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace")
                     for p in sorted(root.rglob("*")) if p.is_file())


def _paragraphs() -> list[str]:
    filler = "The deploy runbook explains each step of the release in plain words. " * 12
    out = []
    for i, row in enumerate(CLOSED):
        out.append(f"## Step {i}\n\n{filler}\n\n{row.text}\n\n{LOOKALIKES[i % len(LOOKALIKES)]}")
    out.append(f"Notes <private>{PRIVATE_WORDS[0]}\n{PRIVATE_WORDS[1]}</private> end.")
    return out


def test_an_ingested_markdown_file_keeps_markers_not_secrets(box: VaultBox,
                                                            tmp_path: Path) -> None:
    path = _document(tmp_path, ".md", "# Runbook\n\n" + "\n\n".join(_paragraphs()) + "\n")
    env = ingest(box.ctx(), str(path))
    assert env.ok, env
    disk = _disk(box.root)
    for row in CLOSED:
        assert row.secret not in disk, row.rule
        assert row.marker in disk, row.rule
    for word in PRIVATE_WORDS:
        assert word not in disk
    assert set(env.data.redacted) == {"private", *(row.rule for row in CLOSED)}


def test_ingested_look_alikes_survive(box: VaultBox, tmp_path: Path) -> None:
    body = "# Look-alikes\n\n" + "\n\n".join(f"- {look}" for look in LOOKALIKES) + "\n"
    env = ingest(box.ctx(), str(_document(tmp_path, ".txt", body)))
    assert env.ok and env.data.redacted == (), env
    disk = _disk(box.vault)
    missing = [look for look in LOOKALIKES if look not in disk]
    assert missing == []
    assert "[REDACTED:" not in disk
