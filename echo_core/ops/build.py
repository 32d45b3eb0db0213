"""``build``: generate an artefact (e.g. a Claude Code plugin) from the installed plugins
(SPEC §6.3).

Every plugin contributes parts through ``register_build_targets`` under the names
``"<target>:<plugin>"``; ``build`` runs all parts of one target, in name order, into a
fresh staging folder beside ``out_dir``, then swaps it into place, so the output is exactly
what the installed plugins generate now (no stale files from an older build). The core
knows no target's format: the parts write everything, including any manifest.

A build also writes ``BUILD_RECORD`` (``.echo-memory-build.json``: target, version, parts,
files). It marks the folder as generated: ``build`` replaces a folder only when it is
absent, empty, or holds a record of the same target, so it never overwrites someone's
project by mistake.

Errors (``EchoError``): 2 for an unknown target (the message lists the known ones) or an
``out_dir`` that is a file or a non-empty folder that is not a build of this target;
1 when a part fails, returns a bad path, or two parts write the same file. On any error
the previous output is left untouched.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import Envelope
from echo_core.protocols import BackendUnavailable

BUILD_HOOK = "register_build_targets"
BUILD_RECORD = ".echo-memory-build.json"


@attrs.frozen
class BuildContext:
    """What ``contribute(out_dir, context)`` receives: the target, the final output folder
    (parts write into a staging folder; use ``out_dir`` only for messages), the installed
    version, and the plugin host (for parts that look at other registrations)."""

    target: str
    out_dir: str
    version: str
    host: Any = None


@attrs.frozen
class BuildResult:
    """A finished build: every file written (relative POSIX paths, sorted) and the parts."""

    target: str
    out_dir: str
    files: tuple[str, ...]
    parts: tuple[str, ...]


def _host_of(ctx_or_host: Any) -> Any:
    return getattr(ctx_or_host, "host", None) or ctx_or_host


def target_parts(host: Any, target: str) -> dict[str, Any]:
    """The parts registered for ``target`` (``"<target>:<plugin>"`` -> part), by name."""
    registered = host.collect(BUILD_HOOK)
    return {name: registered[name] for name in sorted(registered)
            if name.split(":", 1)[0] == target}


def known_targets(host: Any) -> list[str]:
    """Every target some installed plugin contributes to."""
    return sorted({name.split(":", 1)[0] for name in host.collect(BUILD_HOOK)})


def _check_out_dir(out: Path, target: str) -> None:
    if out.exists() and not out.is_dir():
        raise usage_error(f"{out} is a file; give a folder for the {target} build")
    if not out.is_dir() or not any(out.iterdir()):
        return
    try:
        record = json.loads((out / BUILD_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict) or record.get("target") != target:
        raise usage_error(
            f"{out} is not empty and is not an echo-memory {target} build (no {BUILD_RECORD}); "
            "give a new or empty folder, or remove this one first")


def _checked_paths(name: str, written: Any, staging: Path) -> list[str]:
    if written is None:
        raise EchoError(f"build part {name!r} returned no file list; fix or disable that plugin")
    paths = []
    for rel in written:
        pure = PurePosixPath(str(rel))
        if not str(rel) or pure.is_absolute() or ".." in pure.parts or "\\" in str(rel) \
                or not (staging / pure).is_file():
            raise EchoError(f"build part {name!r} returned a bad path {rel!r} (must be a "
                            "relative POSIX path of a file it wrote); fix or disable that plugin")
        paths.append(pure.as_posix())
    return paths


def _run_parts(parts: dict[str, Any], staging: Path, context: BuildContext) -> list[str]:
    owner: dict[str, str] = {}
    for name, part in parts.items():
        try:
            written = part.contribute(str(staging), context)
            paths = _checked_paths(name, list(written) if written is not None else None, staging)
        except Exception as exc:
            if isinstance(exc, EchoError) and not isinstance(exc, BackendUnavailable):
                raise  # the part's own error stands; anything else (an outage too) is its failure
            raise EchoError(f"build part {name!r} failed: {type(exc).__name__}: {exc}; fix "
                            "or disable that plugin", ExitCode.FAILURE) from exc
        for rel in paths:
            if rel in owner and owner[rel] != name:
                raise EchoError(f"{rel!r} is written by both build part {owner[rel]!r} and "
                                f"{name!r}; disable one of the plugins", ExitCode.FAILURE)
            owner[rel] = name
    return sorted(owner)


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        staging.rename(out)
    except OSError:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def build(ctx_or_host: Any, target: str, out_dir: str) -> Envelope[BuildResult]:
    """Build ``target`` into ``out_dir`` from every installed part (module docstring).
    ``ctx_or_host`` is an ``EchoContext`` or a ``PluginHost``; no vault is opened."""
    host = _host_of(ctx_or_host)
    parts = target_parts(host, target)
    if not parts:
        known = ", ".join(known_targets(host)) or "none (no plugin registers a build target)"
        raise usage_error(f"unknown build target {target!r}; installed targets: {known}")
    out = Path(out_dir).expanduser().absolute()
    _check_out_dir(out, target)
    out.parent.mkdir(parents=True, exist_ok=True)
    from importlib.metadata import PackageNotFoundError, version

    try:
        dist_version = version("echo-memory")
    except PackageNotFoundError:
        dist_version = "0.0.0"
    context = BuildContext(target=target, out_dir=str(out), version=dist_version, host=host)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    try:
        files = _run_parts(parts, staging, context)
        record = {"target": target, "version": dist_version, "parts": list(parts),
                  "files": files}
        (staging / BUILD_RECORD).write_text(json.dumps(record, indent=2) + "\n",
                                            encoding="utf-8", newline="\n")
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    result = BuildResult(target, str(out), tuple(sorted([*files, BUILD_RECORD])), tuple(parts))
    return Envelope(True, Action.BUILT, f"built {target} into {out}: {len(result.files)} files "
                    f"from {len(parts)} parts", result)
