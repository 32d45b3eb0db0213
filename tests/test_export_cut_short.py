"""An export that cannot write a file (a full disk, a file size limit) stops and leaves
nothing that looks like a vault: into a new folder the staging folder is removed and the
folder never appears; into a folder given with ``--force`` it says how far it got and
the vault marker (written last) is not there. Staging folders of exports that were
killed are swept by the next export, a live one never."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from echo_core.tempfiles import host_tag
from tests.capture_kit import VaultBox
from tests.conftest import CLI, REPO

LIMIT = 200_000  # bytes: RLIMIT_FSIZE of the export process (as `ulimit -f`)


def _limit(size: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def _run(box: VaultBox, args: list[str], limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **box.env(), "ECHO_VAULT": str(box.vault),
           "ECHO_STATE_DIR": str(box.state)}
    return subprocess.run(CLI + args, env=env, cwd=REPO, capture_output=True, text=True, check=False,
                          timeout=120, preexec_fn=None if limit is None else _limit(limit))


def _vault(root: Path) -> VaultBox:
    box = VaultBox(root).init()
    box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    (box.vault / "attachments").mkdir()
    (box.vault / "attachments/big.bin").write_bytes(os.urandom(LIMIT + 100_000))
    (box.vault / "notes").mkdir()
    for n in range(40):
        (box.vault / f"notes/n{n:02d}.md").write_text(f"# Note {n}\n\nbody {n}\n")
    return box


def test_an_export_that_cannot_write_a_file_creates_no_folder(tmp_path: Path) -> None:
    box = _vault(tmp_path / "src")
    out = tmp_path / "out"
    done = _run(box, ["export", "--to", str(out)], limit=LIMIT)
    assert done.returncode != 0, done.stdout
    assert not out.exists(), sorted(p.name for p in out.iterdir())
    assert not [p for p in tmp_path.iterdir() if "echo-export" in p.name]
    assert "attachments/big.bin" in done.stderr and "nothing was exported" in done.stderr
    again = _run(box, ["export", "--to", str(out)])
    assert again.returncode == 0, again.stderr
    assert (out / "attachments/big.bin").read_bytes() == (box.vault / "attachments/big.bin").read_bytes()


def test_a_forced_export_that_cannot_write_stops_and_says_how_far(tmp_path: Path) -> None:
    box = _vault(tmp_path / "src")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("mine\n")
    done = _run(box, ["export", "--to", str(out), "--force"], limit=LIMIT)
    assert done.returncode != 0, done.stdout
    assert "run the same export again" in done.stderr and "attachments/big.bin" in done.stderr
    assert not (out / "_agent/echo-vault.md").exists()  # the marker goes last
    assert (out / "keep.txt").read_text() == "mine\n"
    again = _run(box, ["export", "--to", str(out), "--force"])
    assert again.returncode == 0, again.stderr
    assert (out / "_agent/echo-vault.md").is_file()


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_staging_folders_of_killed_exports_are_swept_by_the_next(tmp_path: Path) -> None:
    box = _vault(tmp_path / "src")
    (box.vault / "attachments/big.bin").unlink()
    base = tmp_path / "exports"
    base.mkdir()
    dead = base / f".out.echo-export-{host_tag()}-{_dead_pid()}-0a0b0c0d"
    live = base / f".out.echo-export-{host_tag()}-{os.getpid()}-0a0b0c0e"
    legacy = base / ".out.echo-export-1a2b3c4d"  # named before the owner was in the name
    fresh_legacy = base / ".other.echo-export-5a6b7c8d"
    elsewhere = base / ".out.echo-export-00000000-12345-0a0b0c0f"  # another host, fresh
    for folder in (dead, live, legacy, fresh_legacy, elsewhere):
        (folder / "notes").mkdir(parents=True)
        (folder / "notes/x.md").write_text("half\n")
    hours_ago = time.time() - 2 * 3600
    os.utime(legacy, (hours_ago, hours_ago))
    done = _run(box, ["export", "--to", str(base / "out")])
    assert done.returncode == 0, done.stderr
    left = sorted(p.name for p in base.iterdir())
    assert left == sorted(["out", live.name, fresh_legacy.name, elsewhere.name])
