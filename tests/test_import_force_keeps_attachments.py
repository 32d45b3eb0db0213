"""``import --force`` keeps what it replaces: a note's old text in its history (as before),
and now the old bytes of a file that is not text (an image, a PDF) copied under the state
dir, since no note history can hold them; the refusal without ``--force`` says where."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_import_force_copies_the_old_bytes_of_a_replaced_attachment_aside(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    vault, source, state = tmp_path / "vault", tmp_path / "source", tmp_path / "state"
    common = ["--vault", str(vault), "--state-dir", str(state)]
    assert run_cli(["init", *common], env=isolated_env).returncode == 0
    (vault / "att").mkdir()
    (vault / "att/img.png").write_bytes(b"\x89PNG original")
    (source / "att").mkdir(parents=True)
    (source / "att/img.png").write_bytes(b"\x89PNG other")
    refused = run_cli(["import", "--from", str(source), *common], env=isolated_env)
    assert refused.returncode == 2 and "import-replaced" in refused.stderr
    assert (vault / "att/img.png").read_bytes() == b"\x89PNG original"
    done = run_cli(["import", "--from", str(source), "--force", "--json", *common],
                   env=isolated_env)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["replaced"] == ["att/img.png"]
    aside = Path(result["set_aside"])
    assert aside.parent.name == "import-replaced" and state in aside.parents
    assert (aside / "att/img.png").read_bytes() == b"\x89PNG original"
    assert (vault / "att/img.png").read_bytes() == b"\x89PNG other"
    assert str(aside) in result["message"]
