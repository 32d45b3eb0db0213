"""Issue 14 acceptance: a corrupt ``entities.json`` (truncated, random bytes) and a
deleted marker -> ``sweep --apply`` repairs both (the damaged file set aside, never
deleted); resolve, capture and the name cache work after."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.resolve import resolve
from echo_core.ops.sweep import full_sweep
from echo_core.vault import MARKER_PATH
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

INDEX = "_agent/index/entities.json"


def _damage(path: Path, how: str) -> bytes:
    data = path.read_bytes()
    bad = data[: len(data) // 2] if how == "truncated" else random.Random(5).randbytes(300)
    path.write_bytes(bad)
    return bad


@pytest.mark.parametrize("how", ["truncated", "random-bytes"])
def test_sweep_apply_repairs_corrupt_index_and_deleted_marker(how: str, tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Analyst.").ok
    assert box.capture("Vantage Systems", kind="company", aliases=("Vantage",)).ok
    bad = _damage(box.vault / INDEX, how)
    (box.vault / MARKER_PATH).unlink()
    with pytest.raises(EchoError, match="sweep --apply"):
        resolve(box.ctx(), "Ada Lovelace")
    env = full_sweep(box.ctx(), apply=True)
    assert env.ok and env.data.marker is not None and env.data.marker.action == "rewritten"
    aside = [p for p in (box.vault / "_agent/index").iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and env.data.set_aside[0].to.endswith(aside[0].name)
    if how == "truncated":
        assert aside[0].read_bytes() == bad  # kept exactly
    marker = box.read(MARKER_PATH)
    assert "type: marker" in marker and "schema_version: 1" in marker and "created: 2026-03-01" in marker
    json.loads(box.read(INDEX))
    ctx = box.ctx()
    found = resolve(ctx, "vantage").data
    assert found.match and found.path == "resources/companies/vantage-systems.md"
    assert ctx.entity_names.get(found.slug) is not None  # the SQLite name cache agrees
    assert [e.slug for e in ctx.entity_names.exact("Ada Lovelace")] == ["ada-lovelace"]
    updated = capture(ctx, CaptureRequest(title="Ada Lovelace", kind="person", body="Again."))
    assert updated.action == "updated" and updated.data.path == "resources/people/ada-lovelace.md"
    created = capture(ctx, CaptureRequest(title="Grace Hopper", kind="person"))
    assert created.action == "created"
    assert resolve(box.ctx(), "Grace Hopper").data.match


def test_sweep_keeps_the_created_date_of_a_damaged_marker(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / MARKER_PATH).write_text("---\ntype: note\ncreated: 2025-05-05\n---\nx\n",
                                         encoding="utf-8")
    env = full_sweep(box.ctx(), apply=True)
    assert env.data.marker is not None and env.data.marker.created == "2025-05-05"
    assert "created: 2025-05-05" in box.read(MARKER_PATH)
    assert "type: marker" in box.read(MARKER_PATH)


def test_sweep_stamps_a_missing_schema_version_one_line(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    text = "---\ntype: marker\n# kept\ncreated: 2025-05-05\n---\nmine\n"
    (box.vault / MARKER_PATH).write_text(text, encoding="utf-8")
    env = full_sweep(box.ctx(), apply=True)
    assert env.data.marker is not None and env.data.marker.action == "stamped"
    assert box.read(MARKER_PATH) == text.replace("# kept\ncreated: 2025-05-05\n",
                                                 "# kept\ncreated: 2025-05-05\nschema_version: 1\n")


def test_sweep_refuses_a_folder_with_no_vault_in_it(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    (box.vault / "notes.md").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(EchoError, match="no vault here to repair") as caught:
        full_sweep(box.ctx(), apply=True)
    assert caught.value.code == 78
    assert not (box.vault / MARKER_PATH).exists()


def test_sweep_cli_repairs_a_vault_that_lost_its_marker(
        isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_main(["init", "--vault", str(vault_dir)], capsys, monkeypatch).code == 0
    (vault_dir / MARKER_PATH).unlink()
    refused = run_main(["resolve", "x", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert refused.code == 78 and "echo-memory sweep --apply" in refused.err
    dry = run_main(["sweep", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert dry.code == 0 and "rewritten: missing" in dry.out and "--apply" in dry.out
    assert not (vault_dir / MARKER_PATH).exists()
    done = run_main(["sweep", "--apply", "--json", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert done.code == 0 and json.loads(done.out)["marker"]["action"] == "rewritten"
    assert run_main(["resolve", "x", "--vault", str(vault_dir)], capsys, monkeypatch).code == 0


def test_a_journal_with_unreadable_lines_is_set_aside_and_folded(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person").ok
    journal = box.vault / "_agent/index/entities.journal.ndjson"
    lines = journal.read_text(encoding="utf-8").splitlines()
    text = "\n".join([lines[0], "{not json", *lines[1:]]) + "\n"
    journal.write_text(text, encoding="utf-8")
    env = full_sweep(box.ctx(), apply=True)
    assert [s.path for s in env.data.set_aside] == ["_agent/index/entities.journal.ndjson"]
    assert (box.vault / env.data.set_aside[0].to).read_text(encoding="utf-8") == text
    assert journal.read_text(encoding="utf-8") == ""
    assert resolve(box.ctx(), "Ada Lovelace").data.slug == "ada-lovelace"  # slug kept


def test_doctor_names_sweep_for_a_corrupt_index_and_is_ok_after_it(tmp_path: Path) -> None:
    from echo_core.ops.doctor import run_doctor

    box = VaultBox(tmp_path).init()
    _damage(box.vault / INDEX, "truncated")
    check = {c.name: c for c in run_doctor(box.ctx()).data.checks}["entity-index"]
    assert check.status == "fail" and "echo-memory sweep --apply" in check.fix
    full_sweep(box.ctx(), apply=True)
    assert {c.name: c for c in run_doctor(box.ctx()).data.checks}["entity-index"].status == "ok"
