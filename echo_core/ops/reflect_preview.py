"""``preview_context``: a throwaway copy of the running context for ``reflect``'s preview.

A preview of a batch of proposals must show each one against the vault as it will be
once the proposals before it are applied (a note the first one creates is the one the
second updates; a title the first one takes gates the second). ``preview_context(ctx)``
gives a ``PreviewContext`` in which ``reflect_proposal(..., apply=True)`` does exactly
what it would do in ``ctx``, except that every write stays in memory:

* notes, the daily note, the inbox and the entity index go to an ``OverlayStorage``
  over ``ctx.storage`` (reads fall through; the real vault is never written);
* the state dir (the entity name cache, write intents, telemetry) is a temporary folder,
  removed on exit; the name cache starts as a copy of ``ctx``'s (rebuilt from the
  entity index when there is none), so a large vault is not re-indexed;
* no note event fires, no note history is kept, no recall index is touched, and a vault
  that cannot be reached is an error, never a capture queued in the outbox.

The vault lock is the real one, taken per capture as an ordinary preview takes it.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core.context import EchoContext
from echo_core.errors import EchoError, ExitCode
from echo_core.ops.reflect_overlay import OverlayStorage

if TYPE_CHECKING:
    from echo_core.protocols import Queue, Storage
    from echo_core.ranker_upkeep import RankerUpkeep
    from echo_core.routing import RoutingManifest
    from echo_core.vault import Vault


class PreviewContext(EchoContext):
    """``real``'s configuration, plugins and clock over an ``OverlayStorage`` of its vault,
    with ``scratch`` as the state dir (module docstring)."""

    def __init__(self, real: EchoContext, scratch: Path) -> None:
        super().__init__(real.config, real.host, real.env)
        self.overlay = OverlayStorage(real.storage)
        self._real_manifest = real.manifest
        self._scratch = scratch

    @functools.cached_property
    def storage(self) -> Storage:
        """The overlay: the real vault plus this preview's writes."""
        return self.overlay

    @functools.cached_property
    def manifest(self) -> RoutingManifest:
        """The real context's routing manifest."""
        return self._real_manifest

    @functools.cached_property
    def state_dir(self) -> Path:
        """The temporary state dir."""
        return self._scratch

    @functools.cached_property
    def vault(self) -> Vault:
        """The overlay as a ``Vault`` with no events and no note history."""
        from echo_core.vault import Vault

        return Vault(self.overlay, self.manifest)

    @functools.cached_property
    def queue(self) -> Queue | None:
        """None: a preview queues nothing (an unreachable vault is an error)."""
        return None

    @functools.cached_property
    def ranker_upkeep(self) -> RankerUpkeep:
        """Not in a preview: ``EchoError`` 69 (callers skip the recall index then)."""
        raise EchoError("a preview keeps no recall index", ExitCode.UNAVAILABLE)

    def close(self) -> None:
        """Close the name cache's database (before the state dir is removed)."""
        names = self.__dict__.get("entity_names")
        if names is not None:
            names.close()


def _seed_names(real: EchoContext, scratch: Path) -> None:
    """Copy ``real``'s entity name cache into ``scratch`` (nothing when it has none or
    the copy fails: the preview's cache then builds itself from the entity index)."""
    from echo_core.entity_cache import FILE_NAME

    source = real.state_dir / FILE_NAME
    if not source.is_file():
        return
    target = scratch / FILE_NAME
    try:
        with (contextlib.closing(sqlite3.connect(str(source), timeout=5.0)) as src,
              contextlib.closing(sqlite3.connect(str(target))) as dst):
            src.backup(dst)
    except sqlite3.Error:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)


@contextlib.contextmanager
def preview_context(ctx: EchoContext) -> Iterator[PreviewContext]:
    """A ``PreviewContext`` of ``ctx`` (module docstring), its state dir removed on exit.
    Errors: 78 when no temporary folder can be made."""
    try:
        scratch = Path(tempfile.mkdtemp(prefix="echo-reflect-preview-"))
    except OSError as exc:
        raise EchoError(f"cannot make a temporary folder for the preview ({exc}); set "
                        "TMPDIR to a writable folder", ExitCode.NOT_CONFIGURED) from None
    preview = PreviewContext(ctx, scratch)
    try:
        _seed_names(ctx, scratch)
        yield preview
    finally:
        preview.close()
        shutil.rmtree(scratch, ignore_errors=True)
