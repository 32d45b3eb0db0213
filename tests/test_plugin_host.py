"""The plugin host: isolation of broken plugins, disabling, duplicate names, misspelled hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core import hookimpl
from echo_core.errors import EchoError
from echo_core.plugins import create_host
from tests.conftest import run_cli


class StorageA:
    @hookimpl
    def register_storage(self, register: Any) -> None:
        register("mem", object)


class StorageB:
    @hookimpl
    def register_storage(self, register: Any) -> None:
        register("mem", object)


class Misspelled:
    @hookimpl
    def on_note_writen(self, note: Any, ctx: Any) -> None:  # typo on purpose
        pass


class ExplodingRegistration:
    @hookimpl
    def register_tokenizers(self, register: Any) -> None:
        raise RuntimeError("boom at registration")


def test_two_plugins_registering_one_name_is_a_startup_error_naming_both() -> None:
    host = create_host(load_entry_points=False, extra=[("alpha", StorageA()), ("beta", StorageB())])
    with pytest.raises(EchoError) as info:
        host.collect("register_storage")
    assert "'alpha'" in info.value.message and "'beta'" in info.value.message


def test_misspelled_hook_marks_plugin_failed() -> None:
    host = create_host(load_entry_points=False, strict=False, extra=[("typo", Misspelled())])
    record = host.records["typo"]
    assert record.status == "failed"
    assert "on_note_writen" in (record.error or "")
    assert "typo" not in host.plugin_names()


def test_misspelled_hook_is_fatal_when_strict() -> None:
    with pytest.raises(EchoError, match="typo"):
        create_host(load_entry_points=False, strict=True, extra=[("typo", Misspelled())])


def test_registration_error_skips_plugin_and_keeps_others() -> None:
    host = create_host(
        load_entry_points=False, strict=False,
        extra=[("bad", ExplodingRegistration()), ("alpha", StorageA())],
    )
    assert host.collect("register_tokenizers") == {}
    assert host.records["bad"].status == "failed"
    assert "boom at registration" in (host.records["bad"].error or "")
    assert set(host.collect("register_storage")) == {"mem"}


def test_disabled_plugin_is_recorded_and_not_registered() -> None:
    host = create_host(load_entry_points=False, env={"ECHO_DISABLE_PLUGINS": "alpha, x"},
                       extra=[("alpha", StorageA())])
    assert host.records["alpha"].status == "disabled"
    assert host.collect("register_storage") == {}


def test_entry_points_load_every_builtin_plugin() -> None:
    host = create_host(env={})
    assert {"storage_fs", "transport_cli"} <= set(host.plugin_names())
    assert host.records["storage_fs"].hooks == ["register_storage"]
    assert host.records["storage_fs"].source == "entry-point"


def test_hosts_are_independent() -> None:
    one = create_host(load_entry_points=False, extra=[("alpha", StorageA())])
    two = create_host(load_entry_points=False)
    assert "alpha" in one.plugin_names() and "alpha" not in two.plugin_names()


# --- a broken third-party entry point, seen from the CLI -------------------------------


def _install_fake_distribution(site: Path, module_body: str) -> None:
    """A minimal installed distribution ``broken-echo-plugin`` with one entry point."""
    dist = site / "broken_echo_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-echo-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[echo_memory]\nbroken = broken_echo_plugin\n")
    (site / "broken_echo_plugin.py").write_text(module_body)


@pytest.fixture
def broken_env(tmp_path: Path, isolated_env: dict[str, str]) -> dict[str, str]:
    site = tmp_path / "site"
    _install_fake_distribution(site, "raise ImportError('this plugin is broken on purpose')\n")
    return {**isolated_env, "PYTHONPATH": f"{site}:{Path(__file__).resolve().parent.parent}",
            "ECHO_PLUGIN_DISTS": "echo-memory,broken-echo-plugin"}


def test_broken_entry_point_is_listed_as_failed(broken_env: dict[str, str]) -> None:
    out = run_cli(["plugins", "--json"], env=broken_env)
    assert out.returncode == 0, out.stderr
    plugins = {p["name"]: p for p in json.loads(out.stdout)["plugins"]}
    assert plugins["broken"]["status"] == "failed"
    assert "broken on purpose" in plugins["broken"]["error"]
    assert plugins["storage_fs"]["status"] == "ok"


def test_broken_entry_point_does_not_stop_init_and_get(broken_env: dict[str, str], vault_dir: Path) -> None:
    assert run_cli(["init", "--vault", str(vault_dir)], env=broken_env).returncode == 0
    got = run_cli(["get", "_agent/echo-vault.md", "--vault", str(vault_dir)], env=broken_env)
    assert got.returncode == 0 and "schema_version" in got.stdout


def test_broken_entry_point_is_fatal_when_strict(broken_env: dict[str, str], vault_dir: Path) -> None:
    out = run_cli(["init", "--vault", str(vault_dir)], env={**broken_env, "ECHO_STRICT_PLUGINS": "1"})
    assert out.returncode == 1
    assert "plugin 'broken' failed to load" in out.stderr
    assert "broken on purpose" in out.stderr
    assert list(vault_dir.iterdir()) == []


def test_config_disabled_list_blocks_a_plugin(broken_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('disabled = ["broken"]\n')
    out = run_cli(["plugins", "--json"], env={**broken_env, "ECHO_CONFIG": str(config)})
    plugins = {p["name"]: p for p in json.loads(out.stdout)["plugins"]}
    assert plugins["broken"]["status"] == "disabled"

