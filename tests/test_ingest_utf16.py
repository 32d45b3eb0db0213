"""UTF-16 text with its byte-order mark is ingested (its NUL bytes made it "not text"),
and text a server declares as text/* that is not UTF-8 is refused saying so (the message
read "text/plain content, not text")."""

from __future__ import annotations

import json
from pathlib import Path

from echo_core.ops.ingest_fetch import sniff
from tests.conftest import run_cli

NOTE = "# Título del informe\n\nTexto en UTF-16 sobre la memoria de los agentes.\n"


def test_a_utf16_file_with_its_bom_is_ingested(isolated_env: dict[str, str],
                                               vault_dir: Path, tmp_path: Path) -> None:
    env = {**isolated_env, "ECHO_VAULT": str(vault_dir)}
    assert run_cli(["init"], env=env).returncode == 0
    source = tmp_path / "informe.md"
    source.write_bytes(NOTE.encode("utf-16"))
    done = run_cli(["ingest", str(source), "--dry-run", "--json"], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Título del informe" in json.dumps(json.loads(done.stdout), ensure_ascii=False)


def test_sniff_reads_utf16_by_its_bom_and_refuses_it_without() -> None:
    with_bom = NOTE.encode("utf-16")
    assert sniff(with_bom, "text/plain", ".txt") == "text"
    assert sniff(with_bom, "", ".md") == "markdown"
    html = "<html><body><p>Привет</p></body></html>".encode("utf-16")
    assert sniff(html, "text/html", "") == "html"
    assert sniff(NOTE.encode("utf-16-le"), "text/plain", ".txt") is None
