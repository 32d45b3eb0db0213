"""The first two moments of a base's vectors, so a query's cosine statistics cost O(dims²).

The hybrid ranker standardises each note's cosine by the mean and standard deviation of
the query's cosines over every stored note (``VectorStore.cosine_stats``). Scoring every
row for that reads the whole matrix (150 MB at 100k notes, ~8 ms). But for unit rows
``r`` and a query ``q`` the sum of the cosines is ``q · Σr`` and the sum of their squares
is ``qᵀ (Σ r rᵀ) q``: a base keeps ``Σr`` (dims) and ``Σ r rᵀ`` (dims x dims), summed in
float64 when the base is written (~0.13 s at 100k x 384), and a query pays ~16 µs.

File ``vectors.moments``: magic | u32 header length | JSON header (``gen`` of its base,
``dims``, ``count``) padded to 64 bytes | ``Σr`` (dims float64) | ``Σ r rᵀ`` (dims x dims
float64). Written atomically after the base, under the store's writer lock. One whose
``gen`` or shape is not its base's, or that cannot be read, is ignored: the statistics
are then computed from the rows themselves (exact, slower).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt

from plugins.recall_hybrid.vector_files import (
    replace_atomically,
    side_file_head,
    side_file_header,
)

__all__ = ["MOMENTS_NAME", "Moments", "moments_of", "read_moments", "write_moments"]

MOMENTS_NAME = "vectors.moments"
#: Rows multiplied at a time when summing ``r rᵀ`` (float32 products, float64 sums).
CHUNK_ROWS = 8192
_MAGIC = b"ECHOMOM1"

F64 = npt.NDArray[np.float64]


@attrs.frozen(eq=False)
class Moments:
    """``count`` rows' ``total`` (Σr, dims) and ``outer`` (Σ r rᵀ, dims x dims)."""

    count: int
    total: F64
    outer: F64

    def sums(self, query: F64) -> tuple[float, float]:
        """(Σ cosine, Σ cosine²) of ``query`` over the rows."""
        return float(query @ self.total), float(query @ self.outer @ query)


def moments_of(matrix: npt.NDArray[np.float32]) -> Moments:
    """The moments of ``matrix``'s rows."""
    dims = matrix.shape[1]
    total = np.zeros(dims, dtype=np.float64)
    outer = np.zeros((dims, dims), dtype=np.float64)
    for start in range(0, len(matrix), CHUNK_ROWS):
        chunk = np.asarray(matrix[start:start + CHUNK_ROWS], dtype=np.float32)
        total += chunk.sum(axis=0, dtype=np.float64)
        outer += chunk.T @ chunk
    return Moments(len(matrix), total, outer)


def write_moments(folder: Path, gen: bytes, matrix: npt.NDArray[np.float32]) -> None:
    """The moments of the base ``gen`` (its ``matrix``), written atomically."""
    found = moments_of(matrix)
    dims = matrix.shape[1]
    head = side_file_head(_MAGIC, {"gen": gen.hex(), "dims": int(dims), "count": found.count})
    replace_atomically(folder, MOMENTS_NAME, [head, found.total.astype("<f8").tobytes(),
                                               found.outer.astype("<f8").tobytes()])


def read_moments(folder: Path, gen: bytes, count: int, dims: int) -> Moments | None:
    """The moments of the base ``gen`` (``count`` x ``dims``); None when there are none,
    they are another base's, or they cannot be read."""
    try:
        data = (folder / MOMENTS_NAME).read_bytes()
    except OSError:
        return None
    found = side_file_header(data, _MAGIC, gen, count, dims)
    if found is None or len(data) != found[1] + 8 * dims * (dims + 1):
        return None
    start = found[1]
    total = np.frombuffer(data, dtype="<f8", count=dims, offset=start).astype(np.float64)
    outer = np.frombuffer(data, dtype="<f8", count=dims * dims,
                          offset=start + 8 * dims).reshape(dims, dims).astype(np.float64)
    return Moments(count, total, outer)
