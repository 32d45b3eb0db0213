"""attrs' generated methods come from the code cache in a later process, and behave as
freshly compiled ones: same values, same equality, order, repr and hashes (under one
``PYTHONHASHSEED``); a damaged file, the off switch and a process without attrs are
handled (issue 15: ~0.2 ms a class of every cold command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from echo_core import attrs_code_cache

REPO = Path(__file__).resolve().parent.parent

#: Defines classes of every shape attrs generates code for, uses them, and reports what
#: it saw plus how many scripts this process had to compile.
_PROBE = r"""
import json, sys
import echo_core
from echo_core import attrs_code_cache
import attrs

@attrs.frozen
class Point:
    x: int
    y: int = 0

@attrs.define(order=True)
class Ranked:
    score: float
    name: str = attrs.field(default="", converter=str)
    tags: list = attrs.Factory(list)

@attrs.frozen(kw_only=True, cache_hash=True)
class Keyed:
    key: str
    size: int = attrs.field(default=1, validator=attrs.validators.ge(0))

@attrs.define(eq=False, slots=False)
class Plain:
    a: int

from echo_core.models import Hit, Entity
hit = Hit(path="a.md", score=1.5, type="concept", updated="2026-03-01", excerpt="x")
report = {
    "points": [repr(Point(1)), Point(1, 2) == Point(1, 2), hash(Point(3, 4))],
    "ranked": [sorted([Ranked(2.0, 5), Ranked(1.0, "b")])[0].name, repr(Ranked(1.0))],
    "keyed": [hash(Keyed(key="k")), repr(Keyed(key="k", size=2))],
    "bad": None,
    "plain": Plain(1) != Plain(1),
    "hit": [repr(hit), hash(Entity(slug="s", path="p.md", kind="concept", title="S"))],
    "compiled": len(attrs_code_cache._state["new"]),
    "installed": attrs_code_cache.installed(),
}
try:
    Keyed(key="k", size=-1)
except ValueError as exc:
    report["bad"] = type(exc).__name__
print(json.dumps(report))
"""


def _run(cache_home: Path, **env: str) -> dict[str, object]:
    run_env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONHASHSEED": "123",
               "PYTHONPATH": str(REPO), **env}
    if "ECHO_PLUGIN_CACHE" not in env:
        run_env.pop("ECHO_PLUGIN_CACHE", None)
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=run_env, cwd=REPO, check=True, timeout=120)
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _cache_file(cache_home: Path) -> Path:
    return cache_home / "echo-memory" / f"attrs-code-{sys.implementation.cache_tag}.marshal"


def _same_behaviour(a: dict[str, object], b: dict[str, object]) -> None:
    keep = ("points", "ranked", "keyed", "bad", "plain", "hit")
    assert {k: a[k] for k in keep} == {k: b[k] for k in keep}


def test_a_later_process_compiles_nothing_and_behaves_the_same(tmp_path: Path) -> None:
    off = _run(tmp_path / "off", ECHO_PLUGIN_CACHE="off")
    first = _run(tmp_path / "cache")
    second = _run(tmp_path / "cache")
    assert off["installed"] is False and first["installed"] is True
    assert first["compiled"] > 10  # our models and the probe's classes
    assert second["compiled"] == 0  # every generated method came from the file
    assert _cache_file(tmp_path / "cache").is_file()
    assert not _cache_file(tmp_path / "off").exists()
    _same_behaviour(off, first)
    _same_behaviour(off, second)


def test_a_cached_hash_is_this_processs_hash(tmp_path: Path) -> None:
    """The string hash a generated ``__hash__`` holds is salted per process: a cached
    one takes this process's value, so hashes differ across seeds as attrs' do."""
    _run(tmp_path / "cache")
    seeded = [_run(tmp_path / "cache", PYTHONHASHSEED=seed) for seed in ("1", "2")]
    plain = [_run(tmp_path / "off", PYTHONHASHSEED=seed, ECHO_PLUGIN_CACHE="off")
             for seed in ("1", "2")]
    assert [s["compiled"] for s in seeded] == [0, 0]
    for cached, fresh in zip(seeded, plain, strict=True):
        _same_behaviour(cached, fresh)
    assert seeded[0]["points"] != seeded[1]["points"]  # hash((type hash, 3, 4)) moved


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", None])
def test_a_damaged_or_foreign_file_is_ignored_and_rewritten(tmp_path: Path,
                                                            damage: bytes | None) -> None:
    import marshal

    target = _cache_file(tmp_path / "cache")
    target.parent.mkdir(parents=True)
    if damage is None:  # right layout, another interpreter
        damage = marshal.dumps({"format": attrs_code_cache.FORMAT, "version": "2.7",
                                "codes": {"x": b"junk"}})
    target.write_bytes(damage)
    off = _run(tmp_path / "off", ECHO_PLUGIN_CACHE="off")
    first = _run(tmp_path / "cache")
    assert first["compiled"] > 10
    _same_behaviour(off, first)
    assert _run(tmp_path / "cache")["compiled"] == 0


def test_an_unwritable_cache_folder_is_no_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be", "utf-8")
    off = _run(tmp_path / "off", ECHO_PLUGIN_CACHE="off")
    report = _run(blocker)
    assert report["installed"] is True
    _same_behaviour(off, report)


def test_a_process_that_never_imports_attrs_does_not_import_it(tmp_path: Path) -> None:
    code = ("import sys, echo_core; "
            "print(int('attr' in sys.modules), int(any(type(f).__name__ == '_PatchOnImport' "
            "for f in sys.meta_path)))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "c"), "PYTHONPATH": str(REPO)}
    env.pop("ECHO_PLUGIN_CACHE", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=REPO, check=True, timeout=60)
    assert done.stdout.split() == ["0", "1"]  # attrs not imported; the finder waits


def test_a_cache_file_others_may_write_is_never_run(tmp_path: Path) -> None:
    """The file holds code: one that is group- or world-writable is ignored (and its
    code never runs), and a file written by the cache is private."""
    _run(tmp_path / "cache")
    target = _cache_file(tmp_path / "cache")
    assert target.stat().st_mode & 0o777 == 0o600
    os.chmod(target, 0o666)
    report = _run(tmp_path / "cache")
    assert report["compiled"] > 10  # nothing was taken from the shared file
