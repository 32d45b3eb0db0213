"""A low-dimensional sketch of a large base, so a search reads a third of the matrix.

An exact search of 100k x 384 float32 vectors reads the whole 153 MB matrix per query:
about 8 ms on this machine, all of it memory bandwidth. A base of at least ``MIN_ROWS``
rows gets a sketch beside it (``vectors.sketch``): the base's rows projected on its first
``SKETCH_DIMS`` principal axes (computed from an evenly spaced sample of at most
``SAMPLE_ROWS`` rows), 100k x 128 float32 = 51 MB. A search scores every row on the
sketch, keeps the best ``candidates(limit)`` and scores those exactly on the base, so the
answer is exact cosines over a candidate set. Measured on the 100k-note bench vault
(``bench/perf_hybrid.py``'s): 300 of 300 real queries got exactly the exact search's best
40; 2.8 ms instead of 7.8 ms per search, hybrid recall p50 14.0 ms instead of 21.1 ms.

File: magic | u32 header length | JSON header (``gen`` of the base it sketches, ``dims``,
``sketch_dims``, ``count``) padded to 64 bytes | axes (dims x sketch_dims float32) |
rows (count x sketch_dims float32). Written atomically after the base (under the store's
writer lock); a sketch whose ``gen`` or shape is not its base's, or that cannot be read,
is ignored: the search is then exact. A base under ``MIN_ROWS`` has none (exact search is
as fast there).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt

from plugins.recall_hybrid.vector_files import (
    replace_atomically,
    side_file_head,
    side_file_header,
)

__all__ = ["MIN_ROWS", "SKETCH_NAME", "Sketch", "candidates", "read_sketch", "write_sketch"]

SKETCH_NAME = "vectors.sketch"
#: Bases with fewer rows are searched exactly (and get no sketch).
MIN_ROWS = 20_000
SKETCH_DIMS = 128
SAMPLE_ROWS = 5_000
#: Candidates kept from the sketch for an exact score: at least this many.
MIN_CANDIDATES = 400
_MAGIC = b"ECHOSKT1"

F32 = npt.NDArray[np.float32]


def candidates(limit: int) -> int:
    """How many rows the sketch passes on to the exact score for a top ``limit``."""
    return max(MIN_CANDIDATES, 10 * limit)


@attrs.frozen(eq=False)
class Sketch:
    """A mapped sketch: ``axes`` (dims x k) and ``rows`` (count x k), read-only."""

    gen: bytes
    axes: F32
    rows: F32

    def shortlist(self, query: F32, keep: int, dead: npt.NDArray[np.intp]
                  ) -> npt.NDArray[np.intp]:
        """The rows (base row numbers) whose sketched score of ``query`` is among the
        best ``keep``, leaving out the ``dead`` rows; unordered."""
        scores = self.rows @ (query @ self.axes)
        if len(dead):
            scores[dead] = -np.inf
        if keep >= len(scores):
            return np.arange(len(scores), dtype=np.intp)
        return np.argpartition(scores, len(scores) - keep)[len(scores) - keep:]


def _axes(matrix: F32) -> F32:
    """The first ``SKETCH_DIMS`` principal axes of an evenly spaced sample of rows."""
    step = max(1, len(matrix) // SAMPLE_ROWS)
    sample = np.asarray(matrix[::step][:SAMPLE_ROWS], dtype=np.float64)
    _, _, vt = np.linalg.svd(sample - sample.mean(axis=0), full_matrices=False)
    return np.ascontiguousarray(vt[:SKETCH_DIMS].T, dtype=np.float32)


def write_sketch(folder: Path, gen: bytes, matrix: F32) -> None:
    """The sketch of the base ``gen`` (its ``matrix``) written atomically, or, for a
    base under ``MIN_ROWS`` rows, any old sketch removed."""
    if len(matrix) < MIN_ROWS or matrix.shape[1] <= SKETCH_DIMS:
        (folder / SKETCH_NAME).unlink(missing_ok=True)
        return
    axes = _axes(matrix)
    rows = np.ascontiguousarray(matrix @ axes, dtype="<f4")
    head = side_file_head(_MAGIC, {"gen": gen.hex(), "dims": int(matrix.shape[1]),
                                   "sketch_dims": SKETCH_DIMS, "count": len(matrix)})
    replace_atomically(folder, SKETCH_NAME, [head, axes.astype("<f4").tobytes(),
                                              rows.data.cast("B")])


def read_sketch(folder: Path, gen: bytes, count: int, dims: int) -> Sketch | None:
    """The sketch of the base ``gen`` (``count`` x ``dims``) mapped read-only; None when
    there is none, it sketches another base, or it cannot be read."""
    try:
        fd = os.open(folder / SKETCH_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size >= 12 else None
    except OSError:
        data = None
    finally:
        os.close(fd)
    found = None if data is None else side_file_header(data, _MAGIC, gen, count, dims)
    if data is None or found is None:
        return None
    header, start = found
    try:
        k = int(header["sketch_dims"])
    except (ValueError, KeyError, TypeError):
        return None
    if k <= 0 or size != start + 4 * k * (dims + count):
        return None
    axes = np.frombuffer(data, dtype="<f4", count=dims * k, offset=start).reshape(dims, k)
    rows = np.frombuffer(data, dtype="<f4", count=count * k,
                         offset=start + 4 * dims * k).reshape(count, k)
    return Sketch(gen=gen, axes=axes, rows=rows)
