"""``echo-memory --help`` is printed from the page the last identical run printed
(plugins/transport_cli/help_cache.py over echo_core/output_cache.py): byte for byte the
page click prints, without importing click, and computed again whenever the code, the
plugins, the width or the interpreter differ."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from echo_core import cached_output, create_host, remember_output
from plugins.transport_cli.app_state import AppState
from plugins.transport_cli.click_app import build_cli
from tests.conftest import REPO

_PROBE = """
import sys
from plugins.transport_cli.app import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    print(done.code, "click" in sys.modules, file=sys.stderr)
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update({"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "ECHO_CONFIG": str(tmp_path / "none.toml"), "COLUMNS": "80",
                "ECHO_PLUGIN_DISTS": "echo-memory", "PYTHONPATH": str(REPO)})
    env.update(extra)
    return env


def _settled() -> None:
    """Wait until no source file of the checkout changed in the last 2 s (a page made
    from a file that young is not kept: ``output_cache.RACY_NS``)."""
    newest = max(p.stat().st_mtime for folder in ("echo_core", "plugins")
                 for p in (REPO / folder).rglob("*.py"))
    time.sleep(max(0.0, newest + 2.2 - time.time()))


def _help(env: dict[str, str], *args: str) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    return done.stdout, done.stderr.strip().splitlines()[-1]


def _clicks_own_page() -> str:
    host = create_host(env={"ECHO_PLUGIN_DISTS": "echo-memory"})
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        build_cli(host).main(args=["--help"], prog_name="echo-memory", obj=AppState(host))
    return out.getvalue()


def _age(path: Path) -> None:
    old = time.time() - 60
    os.utime(path, (old, old))


def test_the_kept_page_is_clicks_page_and_the_second_run_needs_no_click(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(tmp_path)
    _settled()
    first, how_first = _help(env, "--help")
    second, how_second = _help(env, "--help")
    assert how_first == "0 True" and how_second == "0 False"
    assert first == second
    monkeypatch.setenv("COLUMNS", "80")
    assert first == _clicks_own_page()
    short, how_short = _help(env, "-h")
    assert short == first and how_short == "0 True"  # its own entry: computed once


@pytest.mark.parametrize("change", [{"COLUMNS": "60"}, {"ECHO_PLUGIN_CACHE": "off"}])
def test_another_width_or_the_cache_off_computes_the_page(tmp_path: Path,
                                                          change: dict[str, str]) -> None:
    env = _env(tmp_path)
    wide, _ = _help(env, "--help")
    page, how = _help({**env, **change}, "--help")
    assert how == "0 True"
    assert (page != wide) == ("COLUMNS" in change)  # rewrapped to the narrower width


def test_a_changed_source_file_is_a_miss_and_a_missing_one_too(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "plugin_code.py"
    source.write_text("HELP = 'one'\n")
    _age(source)
    key = {"argv": ["--help"], "width": 78}
    remember_output("probe", key, "the page", [str(source)], loaded_modules=False)
    assert cached_output("probe", key) == "the page"
    assert cached_output("probe", {**key, "width": 60}) is None
    source.write_text("HELP = 'two'\n")
    _age(source)
    assert cached_output("probe", key) is None  # another size (and mtime)
    remember_output("probe", key, "the page", [str(source)], loaded_modules=False)
    source.unlink()
    assert cached_output("probe", key) is None


def test_a_file_changed_in_the_last_two_seconds_is_not_kept_yet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fresh = tmp_path / "fresh.py"
    fresh.write_text("x = 1\n")
    remember_output("probe", {"k": 1}, "text", [str(fresh)], loaded_modules=False)
    assert cached_output("probe", {"k": 1}) is None


def test_a_damaged_cache_file_is_no_error_and_the_file_is_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    remember_output("probe", {"k": 1}, "text", loaded_modules=False)
    written = tmp_path / "cache" / "echo-memory" / "output-probe.json"
    assert written.stat().st_mode & 0o777 == 0o600
    assert json.loads(written.read_text())["text"] == "text"
    written.write_text("{not json")
    assert cached_output("probe", {"k": 1}) is None
    assert cached_output("no such/name", {"k": 1}) is None


def test_the_click_built_page_imports_no_attrs_nor_shutil(tmp_path: Path) -> None:
    """What test_startup_imports checks of --help, on the path that builds the page (the
    entry points cached, the page not)."""
    env = _env(tmp_path)
    _settled()
    _help(env, "--help")  # caches the entry points (and the page)
    page = tmp_path / "cache" / "echo-memory" / "output-root-help.json"
    page.unlink(missing_ok=True)
    probe = _PROBE + "import json; print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    done = subprocess.run([sys.executable, "-c", probe, "--help"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert lines[-2] == "0 True"  # built by click
    imported = {name.split(".")[0] for name in json.loads(lines[-1])}
    assert not imported & {"attr", "attrs", "dataclasses", "shutil", "bz2", "lzma"}


def test_a_page_others_may_write_is_never_printed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    remember_output("probe", {"k": 1}, "the page", loaded_modules=False)
    assert cached_output("probe", {"k": 1}) == "the page"
    written = tmp_path / "cache" / "echo-memory" / "output-probe.json"
    written.chmod(0o622)  # writable by group and others: someone may have changed it
    assert cached_output("probe", {"k": 1}) is None
