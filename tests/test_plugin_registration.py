"""Registration checked once, through one path: failed plugins are blocked, every hook call
goes through pluggy (so it can be traced), duplicates are reported by ``plugins`` and
``doctor``, and ``ECHO_PLUGIN_DISTS`` keeps the suite hermetic."""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from echo_core import hookimpl
from echo_core.errors import EchoError
from echo_core.ops.plugins_info import list_plugins
from echo_core.plugins import PluginHost, create_host
from echo_core.testing.gate_contract import gate_of
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, registered_names
from plugins.transport_cli import app as cli_app
from plugins.transport_cli.app import build_cli
from tests.cli_inproc import run_main
from tests.conftest import run_cli
from tests.test_plugin_host import Misspelled


class Listening:
    """Records every ``on_note_written`` it hears."""

    def __init__(self) -> None:
        self.heard: list[Any] = []

    @hookimpl
    def on_note_written(self, note: Any, ctx: Any) -> None:
        self.heard.append(note)


class RaisingRankers(Listening):
    @hookimpl
    def register_storage(self, register: Any) -> None:
        register("raising-mem", object)

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        raise RuntimeError("ranker registration exploded")


class RaisingCommands(Listening):
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        raise RuntimeError("command registration exploded")


class MisspelledListener(Listening, Misspelled):
    """A real listener plus a misspelled hook."""


class DupRanker:
    """Registers the ranker name "dup"; two instances clash."""

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        register("dup", object)


class BadNames:
    @hookimpl
    def register_tokenizers(self, register: Any) -> None:
        register("", object())
        register(3, object())
        register("fine", object())


class InitAgain:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command("init")
        def init() -> None:
            """A second init."""


def _host(*plugins: tuple[str, object]) -> PluginHost:
    return create_host(load_entry_points=False, env={}, extra=list(plugins))


# --- 1. a failed plugin is unregistered and blocked ------------------------------------


def test_plugin_whose_registration_raises_fires_no_event_hook() -> None:
    bad = RaisingRankers()
    host = _host(("bad", bad))
    assert "raising-mem" in host.collect("register_storage")
    host.collect("register_rankers")
    host.hook.on_note_written(note="n", ctx=None)
    assert bad.heard == []
    assert host.pm.is_blocked("bad")
    assert "raising-mem" not in host.collect("register_storage")  # its other registrations go
    assert not host.add("bad", RaisingRankers())  # the name stays blocked
    shown = {r.name: r for r in list_plugins(host).data.plugins}["bad"]
    assert shown.status == "failed" and "ranker registration exploded" in (shown.error or "")


def test_plugin_whose_register_commands_raises_fires_no_event_hook() -> None:
    bad = RaisingCommands()
    host = _host(("bad", bad))
    build_cli(host)
    host.hook.on_note_written(note="n", ctx=None)
    assert bad.heard == [] and host.pm.is_blocked("bad")
    assert "command registration exploded" in (host.records["bad"].error or "")


def test_plugin_failing_check_pending_is_blocked() -> None:
    host = _host(("typo", MisspelledListener()))
    assert host.records["typo"].status == "failed" and host.pm.is_blocked("typo")
    assert not host.add("typo", Listening())


# --- 2. every hook call goes through pluggy ---------------------------------------------


def _monitor(host: PluginHost) -> list[tuple[str, list[str]]]:
    seen: list[tuple[str, list[str]]] = []
    host.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: seen.append((name, [i.plugin_name for i in impls])),
        lambda outcome, name, impls, kwargs: None,
    )
    return seen


def test_collect_calls_each_plugin_through_pluggy() -> None:
    host = _host(("one", DupRanker()))
    seen = _monitor(host)
    host.collect("register_rankers")
    assert ("register_rankers", ["one"]) in seen


def test_build_cli_and_contract_helpers_call_through_pluggy() -> None:
    host = _host(("again", InitAgain()), ("one", DupRanker()))
    seen = _monitor(host)
    build_cli(host)
    assert registered_names(host, "register_rankers", "one") == ["dup"]
    assert ("register_commands", ["again"]) in seen
    assert ("register_rankers", ["one"]) in seen


class PassingGate:
    @hookimpl
    def gate_capture(self, request: Any, ctx: Any) -> None:
        return None


def test_the_gate_contract_calls_the_gate_through_pluggy() -> None:
    host, gate = gate_of(PassingGate())
    seen = _monitor(host)
    assert gate(request="r", ctx=None) is None
    assert seen == [("gate_capture", [CONTRACT_PLUGIN_NAME])]  # the core default left out


# --- 3. ECHO_TRACE_PLUGINS=1 ------------------------------------------------------------


def test_trace_writes_one_line_per_hook_call_with_plugins_and_outcome(
    capsys: pytest.CaptureFixture[str],
) -> None:
    host = create_host(load_entry_points=False, env={"ECHO_TRACE_PLUGINS": "1"},
                       extra=[("one", DupRanker()), ("bad", RaisingRankers())])
    capsys.readouterr()
    host.collect("register_rankers")
    host.hook.on_note_written(note="n", ctx=None)
    lines = [re.sub(r" \(\d+\.\d ms\)$", "", line) for line in capsys.readouterr().err.splitlines()]
    assert lines == [
        "echo-memory trace: register_rankers <- bad raised RuntimeError: 'ranker registration exploded'",
        "echo-memory trace: register_rankers <- one = []",
        "echo-memory trace: on_note_written <- no plugin = []",  # bad is blocked now
    ]


def test_no_trace_when_unset(capsys: pytest.CaptureFixture[str]) -> None:
    host = create_host(load_entry_points=False, env={}, extra=[("one", DupRanker())])
    host.collect("register_rankers")
    host.hook.on_note_written(note="n", ctx=None)
    assert capsys.readouterr().err == ""


def test_trace_from_the_cli(isolated_env: dict[str, str]) -> None:
    out = run_cli(["plugins"], env={**isolated_env, "ECHO_TRACE_PLUGINS": "1"})
    assert out.returncode == 0, out.stderr
    assert "echo-memory trace: register_commands <- transport_cli = []" in out.stderr
    assert run_cli(["plugins"], env=isolated_env).stderr == ""


# --- 4. registration checked once --------------------------------------------------------


def test_check_registrations_reports_a_duplicate_naming_both_without_raising() -> None:
    host = _host(("one", DupRanker()), ("two", DupRanker()))
    problems = host.check_registrations()
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.kind, problem.hook, problem.name) == ("duplicate", "register_rankers", "dup")
    assert set(problem.plugins) == {"one", "two"}
    assert "'one'" in problem.message and "'two'" in problem.message
    with pytest.raises(EchoError) as used:
        host.collect("register_rankers")
    assert "'one'" in used.value.message and "'two'" in used.value.message
    assert "mem" not in host.collect("register_storage")  # other hooks unaffected


def test_check_registrations_reports_malformed_names_and_keeps_the_rest() -> None:
    host = _host(("bad_names", BadNames()))
    problems = host.check_registrations()
    assert sorted((p.kind, p.name) for p in problems) == [("malformed", "''"), ("malformed", "3")]
    assert all(p.plugins == ("bad_names",) for p in problems)
    assert "fine" in host.collect("register_tokenizers")
    assert host.records["bad_names"].status == "ok"


def test_check_registrations_runs_per_kind_validators() -> None:
    host = _host(("one", DupRanker()))

    def no_plain_objects(name: str, obj: object) -> str | None:
        return "a bare object is no ranker factory" if obj is object else None

    def crashing(name: str, obj: object) -> str | None:
        raise ValueError("validator bug")

    problems = host.check_registrations({"register_rankers": no_plain_objects})
    assert [(p.kind, p.name, p.plugins) for p in problems] == [("invalid", "dup", ("one",))]
    assert "bare object" in problems[0].message
    crashed = host.check_registrations({"register_rankers": crashing})
    assert "validator bug" in crashed[0].message
    assert host.check_registrations() == []


def test_every_register_callback_hook_is_checked() -> None:
    host = _host()
    hooks = host.registration_hooks()
    assert "register_rankers" in hooks and "register_storage" in hooks
    assert "register_commands" not in hooks  # a click group: checked by build_cli


def test_a_duplicate_command_fails_only_itself_and_is_reported() -> None:
    host = create_host(env={}, extra=[("again", InitAgain())])
    cli = build_cli(host)
    problems = host.check_registrations()
    assert [(p.hook, p.name, set(p.plugins)) for p in problems] == [
        ("register_commands", "init", {"echo_core", "again"})]
    assert "get" in cli.commands


def _start_with(monkeypatch: pytest.MonkeyPatch, *extra: tuple[str, object]) -> None:
    monkeypatch.setattr(cli_app, "_startup_host", lambda: create_host(extra=list(extra)))


@pytest.mark.usefixtures("isolated_env")
def test_plugins_and_doctor_fail_on_a_duplicate_ranker_naming_both(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, vault_dir: Path,
) -> None:
    _start_with(monkeypatch, ("one", DupRanker()), ("two", DupRanker()))
    assert run_main(["init", "--vault", str(vault_dir)], capsys, monkeypatch).code == 0
    listed = run_main(["plugins", "--json"], capsys, monkeypatch)
    assert listed.code == 1
    [problem] = json.loads(listed.out)["problems"]
    assert (problem["hook"], problem["name"]) == ("register_rankers", "dup")
    assert set(problem["plugins"]) == {"one", "two"}
    prose = run_main(["plugins"], capsys, monkeypatch)
    assert prose.code == 1 and "'one'" in prose.out and "'two'" in prose.out
    doctor = run_main(["doctor", "--json", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert doctor.code == 1
    checks = {c["name"]: c for c in json.loads(doctor.out)["checks"]}
    assert checks["plugins"]["status"] == "fail"
    assert "'dup'" in checks["plugins"]["detail"]
    assert "'one'" in checks["plugins"]["detail"] and "'two'" in checks["plugins"]["detail"]
    assert [n for n, c in checks.items() if c["status"] == "fail"] == ["plugins"]


@pytest.mark.usefixtures("isolated_env")
def test_a_command_two_plugins_add_refuses_to_run_and_the_rest_works(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, vault_dir: Path,
) -> None:
    _start_with(monkeypatch, ("again", InitAgain()))
    helped = run_main(["--help"], capsys, monkeypatch)
    assert helped.code == 0 and "unavailable: added by two plugins" in helped.out
    refused = run_main(["init", "--vault", str(vault_dir)], capsys, monkeypatch)
    assert refused.code == 1 and "'again'" in refused.err and "'echo_core'" in refused.err
    assert list(vault_dir.iterdir()) == []
    listed = run_main(["plugins", "--json"], capsys, monkeypatch)
    assert listed.code == 1
    [problem] = json.loads(listed.out)["problems"]
    assert (problem["name"], set(problem["plugins"])) == ("init", {"echo_core", "again"})


def test_plugins_lists_no_problems_when_all_is_well(isolated_env: dict[str, str]) -> None:
    out = run_cli(["plugins", "--json"], env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["problems"] == []


# --- 5. ECHO_PLUGIN_DISTS: only the listed distributions load ---------------------------


def test_a_plugin_name_taken_twice_is_reported_and_the_first_kept() -> None:
    first = Listening()
    host = _host(("same", first), ("same", DupRanker()))
    assert host.records["same"].status == "ok" and host.records["same"].hooks == ["on_note_written"]
    [problem] = host.check_registrations()
    assert (problem.kind, problem.name) == ("duplicate", "same")
    host.hook.on_note_written(note="n", ctx=None)
    assert first.heard == ["n"]


def test_an_entry_point_two_distributions_provide_is_reported_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_dist(tmp_path, monkeypatch, entry_point="storage_fs")
    host = create_host(env={"ECHO_PLUGIN_DISTS": ""})
    sys.modules.pop("other_echo_plugin", None)
    problems = [p for p in host.check_registrations() if p.hook == "echo_memory"]
    assert [(p.name, set(p.plugins)) for p in problems] == [
        ("storage_fs", {"echo-memory", "Other_Echo.Plugin"})]
    assert "'Other_Echo.Plugin'" in problems[0].message and "'echo-memory'" in problems[0].message


def _fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_point: str) -> None:
    """A distribution ``Other_Echo.Plugin`` first on sys.path, one ``entry_point``."""
    site = tmp_path / "site"
    dist = site / "Other_Echo.Plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: Other_Echo.Plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[echo_memory]\n{entry_point} = other_echo_plugin\n")
    (site / "other_echo_plugin.py").write_text(
        "from echo_core import hookimpl\n\n"
        "@hookimpl\ndef register_rankers(register):\n    register('other', object)\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    sys.modules.pop("other_echo_plugin", None)


@pytest.fixture
def other_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution ``Other_Echo.Plugin`` on sys.path with an entry point ``other``."""
    _fake_dist(tmp_path, monkeypatch, entry_point="other")
    yield "other"
    sys.modules.pop("other_echo_plugin", None)


def test_plugin_dists_switch_skips_other_distributions(other_dist: str) -> None:
    host = create_host(env={"ECHO_PLUGIN_DISTS": "echo-memory"})
    assert other_dist not in host.records
    assert "storage_fs" in host.plugin_names()


def test_plugin_dists_switch_compares_normalised_names(other_dist: str) -> None:
    host = create_host(env={"ECHO_PLUGIN_DISTS": "echo_memory, other-echo-plugin"})
    assert other_dist in host.plugin_names() and "storage_fs" in host.plugin_names()
    assert "other" in host.collect("register_rankers")


def test_the_suite_is_hermetic_by_default(other_dist: str) -> None:
    host = create_host(env={})  # no key in env: the process switch set by conftest applies
    assert other_dist not in host.records
    assert create_host(env={"ECHO_PLUGIN_DISTS": ""}).records[other_dist].status == "ok"
