"""The entry-point cache: a start-up with an up-to-date cache file finds the plugins without
``importlib.metadata``; any change to what is installed, a damaged file or
``ECHO_PLUGIN_CACHE=off`` falls back to scanning, and plugins load exactly as before."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core import entry_point_cache
from echo_core.entry_point_cache import installed_plugins
from echo_core.plugins import CORE_DISTRIBUTION, ENTRY_POINT_GROUP, create_host

REPO = Path(__file__).resolve().parent.parent
#: A time well in the past (ns), given to the folders a test makes so they are not "racy".
OLD = 1_600_000_000 * 10**9
RACY_NS = entry_point_cache.RACY_NS


def _installed() -> entry_point_cache.InstalledPlugins:
    return installed_plugins(ENTRY_POINT_GROUP, CORE_DISTRIBUTION)


def _cache_file(cache_home: Path) -> Path:
    return cache_home / "echo-memory" / f"entry-points-{ENTRY_POINT_GROUP}.json"


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache folder in tmp_path, the cache switched on, no path entry "racy"."""
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv(entry_point_cache.CACHE_ENV, raising=False)
    monkeypatch.setattr(entry_point_cache, "RACY_NS", 0)
    return home


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty site folder first on sys.path (old mtime); its modules are forgotten after."""
    folder = tmp_path / "site"
    folder.mkdir()
    os.utime(folder, ns=(OLD, OLD))
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in ("cached_echo_plugin", "late_echo_plugin"):
        sys.modules.pop(name, None)


def _add_distribution(site: Path, dist: str, entry_point: str, module: str, body: str,
                      *, mtime: int = OLD) -> None:
    """Install a minimal distribution ``dist`` with one entry point into ``site``."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[echo_memory]\n{entry_point} = {module}\n")
    (site / f"{module}.py").write_text(body)
    os.utime(site, ns=(mtime, mtime))
    importlib.invalidate_caches()


RANKER = "from echo_core import hookimpl\n\n@hookimpl\ndef register_rankers(register):\n" \
         "    register('cached', object)\n"


def test_second_scan_comes_from_the_cache_file(cache_home: Path) -> None:
    first = _installed()
    second = _installed()
    assert not first.from_cache and second.from_cache
    assert second.entry_points == first.entry_points
    assert second.core_version == first.core_version != ""
    assert {"storage_fs", "transport_cli"} <= {e.name for e in second.entry_points}


def test_a_cached_start_gives_the_same_host(cache_home: Path) -> None:
    scanned = create_host(env={"ECHO_PLUGIN_CACHE": "off"})
    _installed()
    cached = create_host(env={})
    assert _installed().from_cache
    assert cached.records == scanned.records


def test_cli_help_from_the_cache_never_imports_importlib_metadata(
        cache_home: Path, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    os.utime(workdir, ns=(OLD, OLD))  # on sys.path as '' (python -c): must not look racy
    probe = ("import sys\nfrom plugins.transport_cli.app import main\n"
             "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
             "print('METADATA', 'importlib.metadata' in sys.modules, file=sys.stderr)\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=60, check=False)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    assert "METADATA True" in runs[0].stderr  # the first start scans and writes the file
    assert "METADATA False" in runs[1].stderr
    assert runs[1].stdout == runs[0].stdout and "Usage: echo-memory" in runs[1].stdout


def test_installing_a_distribution_changes_the_folder_mtime_and_rescans(
        cache_home: Path, site: Path) -> None:
    assert "cached" not in {e.name for e in _installed().entry_points}
    assert _installed().from_cache
    _add_distribution(site, "cached-echo-plugin", "cached", "cached_echo_plugin", RANKER,
                      mtime=OLD + 10**9)
    found = _installed()
    assert not found.from_cache
    [entry] = [e for e in found.entry_points if e.name == "cached"]
    assert (entry.value, entry.dist, entry.version) == (
        "cached_echo_plugin", "cached-echo-plugin", "0.1")
    assert _installed().from_cache


def test_a_new_path_entry_is_another_environment(cache_home: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _installed()
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(tmp_path / "missing"))
        assert not _installed().from_cache
    assert _installed().from_cache  # both environments are kept


@pytest.mark.parametrize("content", [b"", b"{not json", b"[]", b'{"entries": 3}',
                                     b'{"entries": [{"key": 1}]}', b'{"entries": [{}, 2]}',
                                     b"\xff\xfe"])
def test_a_damaged_cache_file_is_ignored_and_rewritten(cache_home: Path, content: bytes) -> None:
    expected = _installed().entry_points
    _cache_file(cache_home).write_bytes(content)
    rescanned = _installed()
    assert not rescanned.from_cache and rescanned.entry_points == expected
    assert _installed().from_cache


def test_a_cached_entry_with_wrong_types_is_a_miss(cache_home: Path) -> None:
    _installed()
    path = _cache_file(cache_home)
    data = json.loads(path.read_text())
    data["entries"][0]["entry_points"][0]["name"] = 7
    path.write_text(json.dumps(data))
    assert not _installed().from_cache


def test_plugin_dists_still_filter_on_a_cache_hit(cache_home: Path, site: Path) -> None:
    _add_distribution(site, "Cached_Echo.Plugin", "cached", "cached_echo_plugin", RANKER)
    _installed()
    assert _installed().from_cache
    only_core = create_host(env={"ECHO_PLUGIN_DISTS": "echo-memory"})
    assert "cached" not in only_core.records and "storage_fs" in only_core.plugin_names()
    both = create_host(env={"ECHO_PLUGIN_DISTS": "echo_memory, cached-echo-plugin"})
    assert both.records["cached"].version == "0.1"
    assert "cached" in both.collect("register_rankers")


def test_a_cached_plugin_failing_to_import_is_recorded_and_the_cache_forgotten(
        cache_home: Path, site: Path) -> None:
    _add_distribution(site, "late-echo-plugin", "late", "late_echo_plugin",
                      "raise ImportError('broken on purpose')\n")
    _installed()
    assert _installed().from_cache
    host = create_host(env={"ECHO_PLUGIN_DISTS": ""})
    record = host.records["late"]
    assert (record.status, record.version, record.source) == ("failed", "0.1", "entry-point")
    assert record.error == "ImportError: broken on purpose"
    assert not _installed().from_cache  # the next start scans again


def test_a_cached_plugin_whose_module_is_gone_is_recorded_as_failed(
        cache_home: Path, site: Path) -> None:
    _add_distribution(site, "cached-echo-plugin", "cached", "cached_echo_plugin", RANKER)
    _installed()
    (site / "cached_echo_plugin.py").unlink()
    importlib.invalidate_caches()
    host = create_host(env={"ECHO_PLUGIN_DISTS": ""})
    assert host.records["cached"].status == "failed"
    assert "ModuleNotFoundError" in (host.records["cached"].error or "")


def test_cache_switched_off_writes_nothing(cache_home: Path) -> None:
    host = create_host(env={"ECHO_PLUGIN_CACHE": "off"})
    assert "storage_fs" in host.plugin_names()
    assert not (cache_home / "echo-memory").exists()


def test_an_unwritable_cache_folder_is_no_error(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(entry_point_cache, "RACY_NS", 0)
    assert not _installed().from_cache
    assert "storage_fs" in create_host(env={}).plugin_names()


def test_a_path_entry_changed_just_now_is_not_cached(cache_home: Path, site: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry_point_cache, "RACY_NS", RACY_NS)
    os.utime(site)  # now: a dist-info written within the timestamp granularity is invisible
    _installed()
    assert not _cache_file(cache_home).exists()


def test_the_cache_file_leaves_no_temp_files(cache_home: Path) -> None:
    _installed()
    assert [p.name for p in (cache_home / "echo-memory").iterdir()] == [
        _cache_file(cache_home).name]
