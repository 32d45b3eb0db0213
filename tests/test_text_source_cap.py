"""A text source (stdin or a file for put, capture, patch, evolve, proposals) is read up to
``MAX_SOURCE_BYTES`` and refused past it: ``put x.md /dev/zero`` read until memory ran out
and ended in a MemoryError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core import text_source
from echo_core.errors import EchoError, ExitCode
from tests.conftest import run_cli


def test_a_source_over_the_cap_is_refused_and_one_at_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_source, "MAX_SOURCE_BYTES", 10)
    (tmp_path / "ten").write_text("0123456789")
    (tmp_path / "eleven").write_text("0123456789A")
    assert text_source.read_text_source(str(tmp_path / "ten"), "FILE") == "0123456789"
    with pytest.raises(EchoError) as refused:
        text_source.read_text_source(str(tmp_path / "eleven"), "FILE")
    assert refused.value.code == ExitCode.USAGE and "more than 10 bytes" in refused.value.message


def test_put_from_an_endless_source_is_a_usage_error(isolated_env: dict[str, str],
                                                      vault_dir: Path) -> None:
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    done = run_cli(["put", "notes/x.md", "/dev/zero", "--vault", str(vault_dir)],
                   env=isolated_env)
    assert done.returncode == 2 and "more than 10,000,000 bytes" in done.stderr
    assert "Traceback" not in done.stderr and not (vault_dir / "notes/x.md").exists()
