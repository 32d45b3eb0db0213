"""One file whose name is not UTF-8 (``caf\\xe9.md`` made by hand) is skipped by every
reader of the vault, not a reason to stop them: recall still catches every other hand
edit, without warning on each call; the fast and full sweeps run; lint names the file
once; ``ls`` lists it (a person can find it to rename it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_inproc import vault_runner

pytestmark = pytest.mark.usefixtures("isolated_env")

BAD_NAME = b"resources/concepts/caf\xe9.md"


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    run = vault_runner(tmp_path, capsys, monkeypatch)
    assert run("capture", "Grace Hopper", "--kind", "person", "--body", "COBOL").code == 0
    assert run("recall", "COBOL").code == 0  # the baseline is recorded
    with open(os.fsencode(run.vault) + b"/" + BAD_NAME, "wb") as handle:
        handle.write(b"# latin1 name\n\ntoklatin\n")
    return run


def recalled(cli, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    done = cli("recall", query, "--json")
    assert done.code == 0, done.err
    assert "could not check for notes changed" not in done.err
    return [hit["path"] for hit in json.loads(done.out)["primary"]]


def test_a_name_not_utf8_leaves_other_hand_edits_seen_by_recall(cli) -> None:  # type: ignore[no-untyped-def]
    (cli.vault / "resources/concepts/hand.md").write_text("# Hand\n\ntokhand\n", "utf-8")
    assert recalled(cli, "tokhand") == ["resources/concepts/hand.md"]
    note = cli.vault / "resources/people/grace-hopper.md"
    note.write_text(note.read_text("utf-8").replace("COBOL", "nanoseconds"), "utf-8")
    assert recalled(cli, "nanoseconds") == ["resources/people/grace-hopper.md"]
    assert recalled(cli, "toklatin") == []


def test_the_fast_and_full_sweeps_run_past_a_name_not_utf8(cli) -> None:  # type: ignore[no-untyped-def]
    fast = cli("sweep", "--fast")
    assert fast.code == 0, fast.err
    full = cli("sweep", "--apply")
    assert full.code == 0, full.err
    (cli.vault / "resources/concepts/later.md").write_text("# Later\n\ntoklater\n", "utf-8")
    assert recalled(cli, "toklater") == ["resources/concepts/later.md"]


def test_lint_names_the_file_whose_name_is_not_utf8(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli("lint")
    assert "caf" in done.err and "not UTF-8" in done.err, (done.out, done.err)


def test_ls_and_load_list_past_a_name_not_utf8(cli) -> None:  # type: ignore[no-untyped-def]
    listed = cli("ls", "resources/concepts")
    assert listed.code == 0 and "caf" in listed.out
    loaded = cli("load")
    assert loaded.code == 0, loaded.err
    assert "could not check for notes changed" not in loaded.err


def test_a_note_an_older_version_indexed_under_a_colon_name_leaves_recall(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A name the rule now refuses (``x:y.md``, read and recorded before) is dropped from
    both indexes by the next check: recall neither returns it nor fails reading it."""
    from echo_core.context import create_context
    from echo_core.entities import content_hash
    from echo_core.ops.index_sync import sync_paths
    from echo_core.ops.vault_changes import manifest_of

    rel, text = "resources/concepts/x:y.md", "# Colon\n\ntokcolon\n"
    (cli.vault / rel).write_text(text, "utf-8")
    ctx = create_context(vault=str(cli.vault), state_dir=str(tmp_path / "state"))
    sync_paths(ctx, [rel], texts={rel: text})
    st = (cli.vault / rel).stat()
    manifest_of(ctx).update({rel: (st.st_size, st.st_mtime_ns, content_hash(text))}, {})
    assert recalled(cli, "tokcolon") == []
    assert manifest_of(create_context(vault=str(cli.vault), state_dir=str(tmp_path / "state"))
                       ).rows([rel]) == {}
