"""Issue 13 item 17, doctor: it names disabled plugins and the outbox's waiting items, runs
every other check with a broken config file (and then exits non-zero), gives a refused
Obsidian key a fix about the key, and a broken stale lock prints as one clean line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from echo_core.context import create_context
from echo_core.ops.doctor import run_doctor
from tests.capture_kit import VaultBox
from tests.conftest import run_cli
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake  # noqa: F401 - fixture


def _checks(stdout: str) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in json.loads(stdout)["checks"]}


def test_doctor_names_disabled_plugins_and_who_disabled_them(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    box = VaultBox(tmp_path).init()
    config = tmp_path / "config.toml"
    config.write_text('disabled = ["gate_duplicate"]\n', "utf-8")
    env = {**isolated_env, "ECHO_DISABLE_PLUGINS": "expand_alias", "ECHO_CONFIG": str(config)}
    done = run_cli(["doctor", "--json", "--vault", str(box.vault), "--state-dir",
                    str(box.state)], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    disabled = _checks(done.stdout)["plugins-disabled"]
    assert disabled["detail"] == ("2 disabled: expand_alias (by ECHO_DISABLE_PLUGINS), "
                                  "gate_duplicate (by config)")
    assert "ECHO_DISABLE_PLUGINS" in disabled["fix"]


def test_doctor_warns_of_a_name_to_disable_that_matches_no_plugin(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    box = VaultBox(tmp_path).init()
    config = tmp_path / "config.toml"
    config.write_text('disabled = ["nosuch"]\n', "utf-8")
    env = {**isolated_env, "ECHO_DISABLE_PLUGINS": "recal_bm25,expand_alias",
           "ECHO_CONFIG": str(config)}
    done = run_cli(["doctor", "--json", "--vault", str(box.vault), "--state-dir",
                    str(box.state)], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = _checks(done.stdout)
    assert checks["plugins-disabled"]["detail"] == "1 disabled: expand_alias (by ECHO_DISABLE_PLUGINS)"
    unknown = checks["plugins-disabled-unknown"]
    assert unknown["status"] == "warn"
    assert "'nosuch' (by config)" in unknown["detail"]
    assert "'recal_bm25' (by ECHO_DISABLE_PLUGINS; did you mean recall_bm25?)" in unknown["detail"]
    assert "recall_bm25" in unknown["fix"] and "echo-memory plugins" in unknown["fix"]


def test_doctor_runs_every_check_when_no_storage_plugin_opens_the_vault(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    box = VaultBox(tmp_path).init()
    env = {**isolated_env, "ECHO_DISABLE_PLUGINS": "storage_fs"}
    done = run_cli(["doctor", "--json", "--vault", str(box.vault), "--state-dir",
                    str(box.state)], env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    checks = _checks(done.stdout)
    assert {"python", "config", "plugins", "plugins-disabled", "vault", "outbox"} <= set(checks)
    assert checks["vault"]["status"] == "fail"
    assert "no storage plugin serves vault URL scheme 'file'" in checks["vault"]["detail"]
    assert checks["outbox"]["status"] == "warn" and "not checked" in checks["outbox"]["detail"]
    assert checks["plugins-disabled"]["detail"] == "1 disabled: storage_fs (by ECHO_DISABLE_PLUGINS)"
    refused = run_cli(["recall", "x", "--vault", str(box.vault), "--state-dir",
                       str(box.state)], env=env)
    assert refused.returncode == 78 and "no storage plugin" in refused.stderr


def test_doctor_counts_waiting_outbox_items_and_those_needing_attention(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert {c.name: c for c in run_doctor(box.ctx()).data.checks}["outbox"].status == "ok"
    ctx = box.ctx()
    assert ctx.queue is not None
    ctx.queue.put({"op": "capture", "args": {"title": "A"}, "day": "2026-03-01",
                   "idempotency_key": "k1"})
    stuck = ctx.queue.put({"op": "capture", "args": {"title": "B"}, "day": "2026-03-01",
                           "idempotency_key": "k2"})
    ctx.queue.mark(stuck, "needs_attention", "stopped at the duplicate gate")
    check = {c.name: c for c in run_doctor(box.ctx()).data.checks}["outbox"]
    assert check.status == "warn"
    assert check.detail.startswith("2 waiting, 1 need attention (first: capture ")
    assert "stopped at the duplicate gate" in check.detail and "flush" in check.fix


def test_doctor_with_a_broken_config_file_runs_every_other_check_then_exits_1(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    box = VaultBox(tmp_path).init()
    config = tmp_path / "broken.toml"
    config.write_text("vault = [unclosed\n", "utf-8")
    env = {**isolated_env, "ECHO_CONFIG": str(config)}
    args = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    done = run_cli(["doctor", "--json", *args], env=env)
    assert done.returncode == 1, done.stderr
    checks = _checks(done.stdout)
    assert checks["config"]["status"] == "fail" and str(config) in checks["config"]["detail"]
    assert {name for name, c in checks.items() if c["status"] == "fail"} == {"config"}
    assert {"vault", "schema", "entity-index", "outbox", "plugins"} <= set(checks)
    prose = run_cli(["doctor", *args], env=env)
    assert prose.returncode == 1 and "[FAIL] config" in prose.stdout
    assert "[ok  ] vault" in prose.stdout
    assert run_cli(["ls", *args], env=env).returncode == 78  # other verbs still refuse


def test_a_refused_obsidian_key_gets_a_fix_about_the_key_not_init(
        tmp_path: Path, obsidian_fake: FakeObsidian,  # noqa: F811 - fixture
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_OBSIDIAN_KEY", "not-" + KEY)
    config = tmp_path / "config.toml"
    config.write_text('[backends.obsidian]\nkey_env = "MY_OBSIDIAN_KEY"\n', "utf-8")
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    ctx = create_context(vault=url, state_dir=str(tmp_path / "state"),
                         env={"HOME": str(tmp_path), "ECHO_CONFIG": str(config)})
    envelope = run_doctor(ctx)
    vault = {c.name: c for c in envelope.data.checks}["vault"]
    assert not envelope.ok and vault.status == "fail"
    assert "init" not in vault.fix
    assert "environment variable MY_OBSIDIAN_KEY" in vault.fix and "API key" in vault.fix
    assert "outbox" in {c.name for c in envelope.data.checks}


def test_a_broken_stale_lock_prints_one_clean_warning_line(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    box = VaultBox(tmp_path).init()
    record = {"pid": 2 ** 22 + 12345, "host": socket.gethostname(), "created": 1.0,
              "token": "dead"}
    (box.vault / "_agent/.lock").write_text(json.dumps(record), "utf-8")
    done = run_cli(["capture", "Ada Lovelace", "--kind", "person", "--vault", str(box.vault),
                    "--state-dir", str(box.state)], env=isolated_env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: broke stale vault lock "), lines
    assert "its owner is no longer running" in lines[0]
    assert ".py" not in done.stderr and "StaleLockWarning" not in done.stderr
