"""Messages that advised a verb that did not exist (issue 14: "advice to run
`echo-memory sweep --apply`, which does not exist") now name the real ``sweep`` for a
damaged entity index, an index that is not UTF-8, and a vault that lost its marker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError
from echo_core.ops.doctor import run_doctor
from echo_core.ops.resolve import resolve
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

INDEX = "_agent/index/entities.json"
SWEEP = "`echo-memory sweep --apply`"


@pytest.mark.parametrize("damage", [b'{"schema_version": 1, "entities": {"a": {"path": 1}}}',
                                    b'{"schema_version": 1, "ent', b"\xff\xfe\x00garbage"])
def test_a_damaged_index_tells_to_run_sweep_apply(damage: bytes, tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / INDEX).write_bytes(damage)
    with pytest.raises(EchoError) as caught:
        resolve(box.ctx(), "anyone")
    assert SWEEP in caught.value.message
    checks = {c.name: c for c in run_doctor(box.ctx()).data.checks}
    assert SWEEP in checks["entity-index"].fix


def test_a_lost_marker_tells_to_run_sweep_apply_which_is_a_command(
        isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_main(["init", "--vault", str(vault_dir)], capsys, monkeypatch).code == 0
    (vault_dir / "_agent/echo-vault.md").unlink()
    refused = run_main(["resolve", "x", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert refused.code == 78 and SWEEP in refused.err
    doctor = run_main(["doctor", "--json", "--vault", str(vault_dir)], capsys, monkeypatch)
    marker = [c for c in json.loads(doctor.out)["checks"] if c["name"] == "marker"]
    assert SWEEP in marker[0]["fix"]
    helped = run_main(["sweep", "--help"], capsys, monkeypatch)
    assert helped.code == 0 and "--apply" in helped.out
