"""The CLI skeleton end to end, in fresh processes: init, put/get, append, fm, ls, doctor."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


def _mark_as_vault(vault_dir: Path) -> None:
    """Make ``vault_dir`` a vault (its marker) without init's layout: note verbs refuse a
    folder that is not one."""
    (vault_dir / "_agent").mkdir(exist_ok=True)
    (vault_dir / "_agent/echo-vault.md").write_text("---\ntype: marker\nschema_version: 1\n---\n",
                                                   "utf-8")


def test_init_creates_the_spec_layout(isolated_env: dict[str, str], vault_dir: Path) -> None:
    out = run_cli(["init", "--vault", str(vault_dir), "--json"], env=isolated_env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["ok"] and result["action"] == "created"
    for path in [
        "_agent/echo-vault.md",
        "_agent/context/current-context.md",
        "_agent/heartbeat/last-session.md",
        "_agent/memory/semantic/operator-preferences.md",
        "_agent/index/entities.json",
        "inbox/captures/inbox.md",
        "templates/person.md",
        "templates/daily.md",
    ]:
        assert (vault_dir / path).is_file(), path
    for folder in ["_agent/memory/episodic", "_agent/memory/working", "_agent/sessions",
                   "_agent/archive", "journal/daily", "inbox/processing-log", "projects/active",
                   "projects/on-hold", "projects/archived", "areas/business", "resources/people",
                   "resources/companies", "resources/concepts", "resources/references",
                   "resources/skills", "meetings", "decisions"]:
        assert (vault_dir / folder).is_dir(), folder
    marker = (vault_dir / "_agent/echo-vault.md").read_text()
    assert "schema_version: 1" in marker and "created: 2026-03-01" in marker
    prefs = (vault_dir / "_agent/memory/semantic/operator-preferences.md").read_text()
    assert "## Fact / Pattern" in prefs and "## Observations" in prefs


def test_second_init_changes_no_byte(isolated_env: dict[str, str], vault_dir: Path) -> None:
    assert run_cli(["init", "--vault", str(vault_dir)], env=isolated_env).returncode == 0
    before = _tree_hash(vault_dir)
    again = run_cli(["init", "--vault", str(vault_dir), "--json"], env=isolated_env)
    assert again.returncode == 0 and json.loads(again.stdout)["action"] == "unchanged"
    assert _tree_hash(vault_dir) == before


def test_init_never_overwrites_a_users_file(isolated_env: dict[str, str], vault_dir: Path) -> None:
    (vault_dir / "inbox/captures").mkdir(parents=True)
    (vault_dir / "inbox/captures/inbox.md").write_text("my own inbox\r\n")
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    assert (vault_dir / "inbox/captures/inbox.md").read_bytes() == b"my own inbox\r\n"


def test_put_then_get_round_trips_bytes(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    text = "---\ntitle: Ada\r\n---\r\n# Ada Lovelace ✨\r\n\r\n## Notes\r\nfirst\r\n"
    put = run_cli(["put", "resources/people/ada.md", "-", "--vault", str(vault_dir)],
                  env=isolated_env, stdin=text.encode())
    assert put.returncode == 0, put.stderr
    assert (vault_dir / "resources/people/ada.md").read_bytes() == text.encode()
    got = run_cli(["get", "resources/people/ada.md", "--json", "--vault", str(vault_dir)], env=isolated_env)
    assert json.loads(got.stdout)["content"] == text


def test_get_section_and_max_chars(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    note = vault_dir / "a.md"
    note.write_text("# A\n\n## Notes\nalpha beta gamma\n\n## Related\n- [[b]]\n")
    got = run_cli(["get", "a.md", "--section", "Notes", "--json", "--vault", str(vault_dir)], env=isolated_env)
    data = json.loads(got.stdout)
    assert "alpha beta gamma" in data["content"] and "Related" not in data["content"]
    cut = run_cli(["get", "a.md", "--max-chars", "5", "--json", "--vault", str(vault_dir)], env=isolated_env)
    data = json.loads(cut.stdout)
    assert data["truncated"] is True and len(data["content"]) <= 5


def test_get_missing_section_lists_real_headings(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    (vault_dir / "a.md").write_text("# A\n\n## Notes\nx\n")
    out = run_cli(["get", "a.md", "--section", "Nope", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 44
    assert "## Notes" in out.stderr


def test_get_missing_note_exits_44(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    out = run_cli(["get", "nope.md", "--vault", str(vault_dir), "--json"], env=isolated_env)
    assert out.returncode == 44
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "not-found" and "nope.md" in error["message"]


def test_append_is_idempotent(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    args = ["append", "inbox/x.md", "- 2026-03-01: hello", "--vault", str(vault_dir), "--json"]
    first = json.loads(run_cli(args, env=isolated_env).stdout)
    second = json.loads(run_cli(args, env=isolated_env).stdout)
    assert first["changed"] is True and second["changed"] is False
    assert (vault_dir / "inbox/x.md").read_text().count("hello") == 1


def test_append_lands_before_a_trailing_related_section_and_keeps_crlf(
        isolated_env: dict[str, str], vault_dir: Path) -> None:
    """What a person appends is content: it goes before the ``## Related`` links that end
    the note (so a later link or ingest never takes it for one of them), not under them."""
    _mark_as_vault(vault_dir)
    (vault_dir / "n.md").write_bytes(b"# N\r\n\r\nBody.\r\n\r\n## Related\r\n- [[a]]\r\n")
    (vault_dir / "m.md").write_bytes(b"# M\n\n## Related\n- [[a]]\n\n## Later\ntext\n")
    for path in ("n.md", "m.md", "n.md"):
        out = run_cli(["append", path, "- Navy admiral", "--vault", str(vault_dir)],
                      env=isolated_env)
        assert out.returncode == 0, out.stderr
    assert (vault_dir / "n.md").read_bytes() == (
        b"# N\r\n\r\nBody.\r\n- Navy admiral\r\n\r\n## Related\r\n- [[a]]\r\n")
    assert (vault_dir / "m.md").read_text() == (
        "# M\n\n## Related\n- [[a]]\n\n## Later\ntext\n- Navy admiral\n")


def test_fm_changes_one_line_only(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    original = "---\r\n# keep me\r\nzeta: 'quoted'\r\nstatus: active\r\nalpha: [a, b]\r\n---\r\nbody\r\n"
    (vault_dir / "n.md").write_bytes(original.encode())
    out = run_cli(["fm", "n.md", "status", '"on-hold"', "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert (vault_dir / "n.md").read_bytes() == original.replace("status: active", "status: on-hold").encode()


def test_fm_rejects_non_json_value_naming_it(isolated_env: dict[str, str], vault_dir: Path) -> None:
    _mark_as_vault(vault_dir)
    (vault_dir / "n.md").write_text("x\n")
    out = run_cli(["fm", "n.md", "status", "on hold", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 2 and "'on hold'" in out.stderr
    assert (vault_dir / "n.md").read_text() == "x\n"


def test_ls_lists_files_under_a_folder(isolated_env: dict[str, str], vault_dir: Path) -> None:
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    out = run_cli(["ls", "templates", "--vault", str(vault_dir)], env=isolated_env)
    assert "templates/person.md" in out.stdout.splitlines()
    assert all(line.startswith("templates/") for line in out.stdout.splitlines())


def test_ls_of_a_missing_folder_is_not_found_and_of_a_file_says_use_get(
        isolated_env: dict[str, str], vault_dir: Path) -> None:
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    out = run_cli(["ls", "templtes", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 44 and "no such folder" in out.stderr and not out.stdout
    out = run_cli(["ls", "templates/person.md", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 2 and "echo-memory get templates/person.md" in out.stderr
    assert run_cli(["ls", "--vault", str(vault_dir)], env=isolated_env).returncode == 0


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../b", "a\x00b"])
@pytest.mark.parametrize("verb", ["get", "put", "append"])
def test_bad_paths_exit_2_naming_the_path(isolated_env: dict[str, str], vault_dir: Path, verb: str, bad: str) -> None:
    from echo_core.errors import EchoError, ExitCode
    from echo_core.paths import normalize_path

    _mark_as_vault(vault_dir)
    if "\x00" in bad:  # argv cannot carry NUL: check the shared validator directly
        with pytest.raises(EchoError) as info:
            normalize_path(bad)
        assert info.value.code == ExitCode.USAGE and repr(bad) in info.value.message
        return
    args = {"get": [verb, bad], "put": [verb, bad, "-"], "append": [verb, bad, "line"]}[verb]
    out = run_cli(args + ["--vault", str(vault_dir)], env=isolated_env, stdin=b"x")
    assert out.returncode == 2, out.stderr
    assert repr(bad) in out.stderr
    assert [p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*")] == [
        "_agent", "_agent/echo-vault.md"]


def test_doctor_says_which_source_won(isolated_env: dict[str, str], vault_dir: Path, tmp_path: Path) -> None:
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    via_env = run_cli(["doctor", "--json"], env={**isolated_env, "ECHO_VAULT": str(vault_dir)})
    checks = {c["name"]: c for c in json.loads(via_env.stdout)["checks"]}
    assert checks["vault-setting"]["detail"].endswith("(from env)")
    assert checks["marker" if "marker" in checks else "schema"]["status"] == "ok"
    config = tmp_path / "c.toml"
    config.write_text(f'vault = "{vault_dir}"\n')
    via_file = run_cli(["doctor", "--json"], env={**isolated_env, "ECHO_CONFIG": str(config)})
    checks = {c["name"]: c for c in json.loads(via_file.stdout)["checks"]}
    assert checks["vault-setting"]["detail"].endswith("(from config)")
    via_flag = run_cli(["doctor", "--json", "--vault", str(vault_dir)],
                       env={**isolated_env, "ECHO_CONFIG": str(config), "ECHO_VAULT": "/nowhere"})
    checks = {c["name"]: c for c in json.loads(via_flag.stdout)["checks"]}
    assert checks["vault-setting"]["detail"].endswith("(from flag)")


def test_doctor_fails_on_uninitialised_vault_with_the_fix(isolated_env: dict[str, str], vault_dir: Path) -> None:
    out = run_cli(["doctor", "--vault", str(vault_dir)], env=isolated_env)
    assert out.returncode == 1
    assert "echo-memory init" in out.stdout


def test_bad_config_file_is_exit_78_naming_the_file(isolated_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "broken.toml"
    config.write_text("vault = [unclosed\n")
    out = run_cli(["ls"], env={**isolated_env, "ECHO_CONFIG": str(config)})
    assert out.returncode == 78 and str(config) in out.stderr


def test_default_vault_is_embedded_under_xdg_data(isolated_env: dict[str, str]) -> None:
    out = run_cli(["init", "--json"], env=isolated_env)
    assert out.returncode == 0, out.stderr
    data_home = Path(isolated_env["XDG_DATA_HOME"])
    assert (data_home / "echo-memory/vault/_agent/echo-vault.md").is_file()


def test_help_teaches_the_first_steps() -> None:
    out = run_cli(["--help"])
    assert out.returncode == 0
    for verb in ["init", "doctor", "get", "put", "append", "fm", "ls", "plugins"]:
        assert f"  {verb} " in out.stdout


def test_every_command_of_the_built_cli_has_the_common_options() -> None:
    """Derived and raw commands alike (the CLI adds what a plugin's command lacks)."""
    import click

    from echo_core.plugins import create_host
    from plugins.transport_cli.app import build_cli

    def leaves(group: click.Group) -> list[click.Command]:
        out: list[click.Command] = []
        for command in group.commands.values():
            out += leaves(command) if isinstance(command, click.Group) else [command]
        return out

    from plugins.transport_cli.derived import LazyOperationCommand

    for command in leaves(build_cli(create_host(env={}, strict=True))):
        if isinstance(command, LazyOperationCommand):
            command = command.real()
        opts = {o for p in command.params for o in getattr(p, "opts", ())}
        assert {"--json", "--vault", "--state-dir"} <= opts, command.name
