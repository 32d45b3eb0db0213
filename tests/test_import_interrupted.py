"""An import killed part-way (kill -9 after a seeded batch) leaves a vault that says so:
into a new vault the marker comes last, so the half-imported folder is not a vault yet
(a capture there is refused instead of writing notes the import would bring); doctor
fails naming the import to run again, load says it too; and running the same import
again finishes it without --force, every file once, the notes indexed for recall and
the entity index. Checked on a folder and a PostgreSQL target; the state a kill between
the last write and the indexing leaves is finished by the rerun too."""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.context import create_context
from echo_core.entities import EntityStore
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.vault import MARKER_PATH
from tests.capture_kit import isolated_env
from tests.conftest import REPO, run_cli
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module

NOTES = 1100  # with the vault's own files: three batches of at most 500
#: ``echo-memory`` that dies as kill -9 would (``os._exit``) after KILL_AFTER batches
#: (each batch ends with a progress report), or, with KILL_BEFORE_INDEX, right before the
#: written notes are indexed.
KILLED = """
import os, sys
from echo_core import progress
try:
    import echo_core.ops.transfer_import as vt
except ImportError:  # before import had a module of its own
    import echo_core.ops.vault_transfer as vt
after = int(os.environ.get("KILL_AFTER", "0")); seen = [0]
def report(done, total):
    seen[0] += 1
    if after and seen[0] >= after:
        os._exit(137)
progress.report = report
if os.environ.get("KILL_BEFORE_INDEX"):
    vt._index = lambda *args: os._exit(137)
sys.argv = ["echo-memory", *sys.argv[1:]]
from plugins.cli_start import run
run()
"""


def _killed(args: list[str], env: dict[str, str], **kill: str) -> int:
    done = subprocess.run(["python", "-c", KILLED, *args], env={**os.environ, **env, **kill},
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    return done.returncode


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder vault: a captured person with an alias, 1100 notes, an attachment."""
    base = tmp_path_factory.mktemp("interrupted")
    root = base / "source"
    ctx = create_context(vault=str(root), state_dir=str(base / "state"),
                         env=isolated_env(base / "home"))
    init_vault(ctx)
    capture(ctx, CaptureRequest(title="Ada Lovelace", kind="person",
                                aliases=["Countess of Lovelace"],
                                body="Wrote the first program."))
    (root / "bulk").mkdir()
    for n in range(NOTES):
        (root / f"bulk/n{n:04d}.md").write_text(f"# Bulk {n}\n\nsmall note tokbulk{n}\n")
    (root / "attachments").mkdir()
    (root / "attachments/pixel.png").write_bytes(bytes(range(256)))
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not any(s.startswith(".") for s in p.relative_to(root).parts)}


def _vault_files(vault: str, home: Path) -> dict[str, bytes]:
    ctx = create_context(vault=vault, state_dir=str(home / "peek"), env=isolated_env(home))
    storage = ctx.vault.storage
    try:
        paths = storage.list("")
        reader = getattr(storage, "read_bytes", None)
        return {p: reader(p) if reader else storage.read(p).encode() for p in paths}
    finally:
        close = getattr(storage, "close", None)
        if close is not None:
            close()


@pytest.fixture(params=["folder", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "folder":
        yield str(tmp_path / "vault")
    else:
        yield request.getfixturevalue("pg_schema_url")


@pytest.mark.parametrize("into", ["new", "existing"])
def test_an_import_killed_part_way_says_so_and_a_rerun_finishes_it(
        source: Path, target: str, into: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home", ECHO_VAULT=target,
                       ECHO_STATE_DIR=str(tmp_path / "state"))
    if into == "existing":
        assert run_cli(["init"], env=env).returncode == 0
    after = random.Random(f"{target[:4]}-{into}").randint(1, 2)  # seeded: batch 1 or 2
    assert _killed(["import", "--from", str(source)], env, KILL_AFTER=str(after)) == 137
    held = _vault_files(target, tmp_path / "home")
    assert 0 < len(held) < len(_files(source))
    if into == "new":
        assert MARKER_PATH not in held  # not a vault until the import finished
        refused = run_cli(["capture", "Ada Lovelace", "-k", "person", "-b", "meanwhile"],
                          env=env)
        assert refused.returncode == 78, refused.stdout + refused.stderr
    else:
        loaded = run_cli(["load", "--brief"], env=env)
        assert "an import into this vault did not finish" in loaded.stdout + loaded.stderr
    doctor = run_cli(["doctor"], env=env)
    assert doctor.returncode != 0 and "did not finish" in doctor.stdout, doctor.stdout
    assert f"import --from {source}" in doctor.stdout
    rerun = run_cli(["import", "--from", str(source), "--json"], env=env)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert json.loads(rerun.stdout)["replaced"] == []
    held = _vault_files(target, tmp_path / "home")
    expected = _files(source)
    if into == "existing":  # the vault keeps its own marker and index
        expected = {p: d for p, d in expected.items() if not p.startswith("_agent/")}
    assert {p: held.get(p) for p in expected} == expected
    if not target.startswith("postgresql"):  # each file has its time, the cut batch's too
        times = {p: (source / p).stat().st_mtime_ns for p in expected}
        assert {p: (Path(target) / p).stat().st_mtime_ns for p in expected} == times
    doctor = run_cli(["doctor"], env=env)
    assert doctor.returncode == 0 and "did not finish" not in doctor.stdout, doctor.stdout
    hit = json.loads(run_cli(["recall", f"tokbulk{NOTES - 1}", "-n", "1", "--no-linked",
                              "--json"], env=env).stdout)
    assert hit["primary"][0]["path"] == f"bulk/n{NOTES - 1:04d}.md"
    assert "ada-lovelace" in run_cli(["resolve", "countess of lovelace"], env=env).stdout


def test_a_kill_between_the_writes_and_the_indexing_is_finished_by_a_rerun(
        target: str, tmp_path: Path) -> None:
    """A plain folder of notes (no marker) into a new vault, killed once every file is
    written: the rerun writes nothing and still indexes them (the entity index learns
    the alias), then ``init`` makes it a vault."""
    plain = tmp_path / "plain"
    (plain / "resources/people").mkdir(parents=True)
    (plain / "resources/people/grace-hopper.md").write_text(
        "---\naliases: [Amazing Grace]\n---\n# Grace Hopper\n\nWrote the first compiler.\n")
    for n in range(20):
        (plain / f"n{n}.md").write_text(f"# Note {n}\n\nplain tokplain{n}\n")
    env = isolated_env(tmp_path / "home", ECHO_VAULT=target,
                       ECHO_STATE_DIR=str(tmp_path / "state"))
    assert _killed(["import", "--from", str(plain)], env, KILL_BEFORE_INDEX="1") == 137
    rerun = run_cli(["import", "--from", str(plain), "--json"], env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["files"] == 0
    ctx = create_context(vault=target, state_dir=str(tmp_path / "peek"),
                         env=isolated_env(tmp_path / "home"))
    try:  # indexed by the rerun itself, before any verb catches up with the notes
        assert EntityStore(ctx.vault.storage).load().get("grace-hopper") is not None
    finally:
        close = getattr(ctx.vault.storage, "close", None)
        if close is not None:
            close()
    assert run_cli(["init"], env=env).returncode == 0
    assert "grace-hopper" in run_cli(["resolve", "amazing grace"], env=env).stdout


def test_a_forced_import_killed_part_way_keeps_each_replaced_text_once(
        source: Path, tmp_path: Path) -> None:
    """The rerun of a forced import is forced too (doctor says so), and the history
    holds each replaced note's old text once, not again for the notes the run cut short
    had kept before it was killed."""
    vault = tmp_path / "vault"
    env = isolated_env(tmp_path / "home", ECHO_VAULT=str(vault),
                       ECHO_STATE_DIR=str(tmp_path / "state"))
    assert run_cli(["init"], env=env).returncode == 0
    mine = ("bulk/n0000.md", f"bulk/n{NOTES - 1:04d}.md")  # written in the first, last batch
    for path in mine:
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(f"# mine\n\n{path}\n")
    args = ["import", "--from", str(source), "--force"]
    assert _killed(args, env, KILL_AFTER="1") == 137
    assert f"import --from {source} --force" in run_cli(["doctor"], env=env).stdout
    rerun = run_cli([*args, "--json"], env=env)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    for path in mine:
        kept = json.loads(run_cli(["history", path, "--json"], env=env).stdout)["versions"]
        assert [v["headline"] for v in kept] == ["# mine"], path
        assert (vault / path).read_bytes() == (source / path).read_bytes()
