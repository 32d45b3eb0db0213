"""An import's memory is bounded: a note (``.md``) larger than the cap every text source
has (``text_source.MAX_SOURCE_BYTES``, 10 MB) is skipped and listed, never taken in as a
note; an attachment of any size is copied; and the files are read in batches bounded in
bytes as well as in count, so many large files never sit in memory at once."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from echo_core.context import EchoContext, create_context
from echo_core.ops import vault_transfer
from echo_core.text_source import MAX_SOURCE_BYTES
from tests.capture_kit import isolated_env

MB = 1024 * 1024


def _ctx(tmp_path: Path) -> EchoContext:
    return create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                          env=isolated_env(tmp_path / "home"))


def test_a_note_over_the_cap_is_skipped_and_listed_an_attachment_is_not(
        tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "huge.md").write_bytes(b"# huge\n" + b"x" * MAX_SOURCE_BYTES)
    (source / "video.bin").write_bytes(b"\0" * (MAX_SOURCE_BYTES + 10))
    (source / "small.md").write_text("# small\n")
    done = vault_transfer.import_vault(_ctx(tmp_path), str(source))
    assert [s.path for s in done.data.skipped] == ["huge.md"]
    assert f"{MAX_SOURCE_BYTES:,}" in done.data.skipped[0].reason
    assert not (tmp_path / "vault/huge.md").exists()
    assert (tmp_path / "vault/video.bin").stat().st_size == MAX_SOURCE_BYTES + 10
    assert (tmp_path / "vault/small.md").is_file() and not done.ok


def test_many_large_files_are_not_held_in_memory_at_once(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for n in range(80):
        (source / f"f{n:02d}.bin").write_bytes(bytes([n]) * MB)
    tracemalloc.start()
    try:
        done = vault_transfer.import_vault(_ctx(tmp_path), str(source))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done.ok and done.data.files == 80
    assert peak < 48 * MB, f"peak {peak / MB:.0f} MB"
