"""``BuildTargetContract``: the behaviour every ``BuildTarget`` part must show.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the fixtures::

    from echo_core.testing import BuildTargetContract

    class TestClaudeCodeHooksPart(BuildTargetContract):
        @pytest.fixture
        def build_part(self):
            return ClaudeCodeHooksPart()

        @pytest.fixture
        def build_context(self, tmp_path):
            return make_build_context(tmp_path / "vault")
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from echo_core.protocols import BuildTarget


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` as ``relative POSIX path -> bytes``."""
    if not root.exists():
        return {}
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


class BuildTargetContract:
    """Contract tests for ``echo_core.protocols.BuildTarget``.

    Fixtures to override:

    * ``build_part`` -> the ``BuildTarget`` part as your plugin registers it. Required.
    * ``build_context`` -> the ``context`` passed to ``contribute``. Optional; ``None``.

    Each test gives the part a fresh ``out_dir`` inside ``tmp_path``. Checks:
    ``contribute`` writes at least one file, only inside ``out_dir``; it returns relative
    POSIX paths (no ``..``) of files that exist, naming every file it wrote; building
    twice (afresh or over its own output) gives byte-identical files.
    """

    @pytest.fixture
    def build_part(self) -> BuildTarget:
        raise NotImplementedError("override the `build_part` fixture to build your part")

    @pytest.fixture
    def build_context(self) -> Any:
        return None

    @staticmethod
    def build(part: BuildTarget, out_dir: Path, context: Any) -> list[str]:
        """Run ``contribute`` into ``out_dir`` (created first) and return its paths."""
        out_dir.mkdir(parents=True, exist_ok=True)
        written = part.contribute(str(out_dir), context)
        assert written is not None, "contribute must return the files it wrote"
        return list(written)

    def test_implements_build_target_protocol(self, build_part: BuildTarget) -> None:
        assert isinstance(build_part, BuildTarget)

    def test_returns_relative_paths_of_existing_files(
        self, build_part: BuildTarget, build_context: Any, tmp_path: Path
    ) -> None:
        out_dir = tmp_path / "out"
        written = self.build(build_part, out_dir, build_context)
        assert written, "contribute wrote no file"
        for rel in written:
            assert isinstance(rel, str) and rel, f"bad path {rel!r}"
            pure = PurePosixPath(rel)
            assert not pure.is_absolute() and ".." not in pure.parts, f"{rel!r} is not relative"
            assert "\\" not in rel, f"{rel!r} must use '/' separators"
            assert (out_dir / rel).is_file(), f"{rel!r} was returned but does not exist"

    def test_reports_every_file_it_writes(
        self, build_part: BuildTarget, build_context: Any, tmp_path: Path
    ) -> None:
        out_dir = tmp_path / "out"
        written = self.build(build_part, out_dir, build_context)
        reported = {PurePosixPath(rel).as_posix() for rel in written}
        unreported = set(snapshot(out_dir)) - reported
        assert not unreported, f"files written but not returned: {sorted(unreported)}"

    def test_writes_only_inside_out_dir(
        self, build_part: BuildTarget, build_context: Any, tmp_path: Path
    ) -> None:
        sandbox = tmp_path / "sandbox"
        (sandbox / "sibling").mkdir(parents=True)
        (sandbox / "sibling" / "keep.txt").write_text("untouched\n")
        before = snapshot(sandbox)
        out_dir = sandbox / "out"
        self.build(build_part, out_dir, build_context)
        after = {p: data for p, data in snapshot(sandbox).items() if not p.startswith("out/")}
        assert after == before, "contribute changed files outside out_dir"

    def test_is_deterministic(
        self, build_part: BuildTarget, build_context: Any, tmp_path: Path
    ) -> None:
        out_dir = tmp_path / "out"
        first_paths = self.build(build_part, out_dir, build_context)
        first = snapshot(out_dir)
        again_paths = self.build(build_part, out_dir, build_context)
        assert snapshot(out_dir) == first, "building over the previous output changed bytes"
        shutil.rmtree(out_dir)
        fresh_paths = self.build(build_part, out_dir, build_context)
        assert snapshot(out_dir) == first, "building afresh gave different bytes"
        assert sorted(first_paths) == sorted(again_paths) == sorted(fresh_paths)
