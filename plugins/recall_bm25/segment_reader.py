"""Reading a base segment: memory-mapped arrays, validated cheaply on open.

Opening maps 13 ``.npy`` files and parses ``meta.json``; nothing is read eagerly, so the
cost does not grow with the vault (no unpickling, no dictionary to load). Lookups touch
only the pages they need: a term is a binary search over ``term_key``; a path a binary
search over ``path_key`` confirmed against the stored path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from plugins.recall_bm25.keys import path_key
from plugins.recall_bm25.layout import CorruptIndex
from plugins.recall_bm25.segment_format import ARRAYS, SCHEMA, SegmentArrays, expected_length

__all__ = ["BaseSegment"]


def _load(path: Path, dtype: np.dtype[Any], length: int) -> npt.NDArray[Any]:
    """Map one array file and check its dtype and length (``CorruptIndex`` otherwise)."""
    array: npt.NDArray[Any]
    try:
        if length == 0:
            array = np.load(path, allow_pickle=False)  # an empty range cannot be mapped
        else:
            # A plain ndarray view of the map: np.memmap's Python-level __getitem__ costs
            # ~8 us per slice, which dominated small queries.
            array = np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)
    except (OSError, ValueError, EOFError) as exc:
        raise CorruptIndex(f"cannot map {path.name}: {exc}") from exc
    if array.dtype != dtype or array.shape != (length,):
        raise CorruptIndex(
            f"{path.name} is {array.dtype}{list(array.shape)}, expected {dtype}[{length}]")
    return array


class BaseSegment:
    """One immutable base generation (or the implicit empty one, ``generation == 0``).

    Attributes: ``generation``, ``arrays`` (``SegmentArrays``), ``n_docs``, ``total_len``,
    ``tokenizer``. Doc ids are ``0..n_docs-1``.
    """

    def __init__(self, generation: int, arrays: SegmentArrays, total_len: int,
                 tokenizer: str) -> None:
        self.generation = generation
        self.arrays = arrays
        self.n_docs = arrays.n_docs
        self.total_len = total_len
        self.tokenizer = tokenizer

    @classmethod
    def empty(cls) -> BaseSegment:
        """The base of an index never built: no documents."""
        return cls(0, SegmentArrays.empty(), 0, "")

    @classmethod
    def open(cls, folder: Path, generation: int) -> BaseSegment:
        """Map the segment in ``folder``. Raises ``CorruptIndex`` when ``meta.json`` is
        missing or malformed, the schema differs, or an array is missing or mis-sized;
        ``FileNotFoundError`` when the folder itself is gone."""
        try:
            raw = (folder / "meta.json").read_text("utf-8")
        except FileNotFoundError:
            if not folder.is_dir():
                raise
            raise CorruptIndex(f"{folder.name} has no meta.json (incomplete)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptIndex(f"cannot read {folder.name}/meta.json: {exc}") from exc
        try:
            meta = json.loads(raw)
            schema = meta["schema"]
            sizes = [int(meta[k]) for k in ("n_docs", "n_terms", "n_postings", "n_path_bytes")]
            total_len, tokenizer = int(meta["total_len"]), str(meta["tokenizer"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptIndex(f"{folder.name}/meta.json is malformed: {exc!r}") from exc
        if schema != SCHEMA:
            raise CorruptIndex(f"{folder.name} has schema {schema!r}, this code reads {SCHEMA}")
        loaded = {name: _load(folder / f"{name}.npy", dtype, expected_length(rule, *sizes))
                  for name, (dtype, rule) in ARRAYS.items()}
        arrays = SegmentArrays(**loaded)
        if int(arrays.term_ptr[-1]) != sizes[2] or int(arrays.fwd_ptr[-1]) != sizes[2] \
                or int(arrays.path_ptr[-1]) != sizes[3]:
            raise CorruptIndex(f"{folder.name}: offsets do not end at the array sizes")
        return cls(generation, arrays, total_len, tokenizer)

    def term_ids(self, keys: Sequence[int]) -> npt.NDArray[np.int64]:
        """The term id of each key, or -1 where the dictionary lacks it."""
        table = self.arrays.term_key
        wanted = np.asarray(keys, dtype=np.int64)
        if table.shape[0] == 0 or wanted.size == 0:
            return np.full(wanted.shape, -1, dtype=np.int64)
        pos = np.searchsorted(table, wanted)
        clipped = np.minimum(pos, table.shape[0] - 1)
        return np.where(table[clipped] == wanted, clipped, -1).astype(np.int64)

    def postings(self, term_id: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint16]]:
        """(doc ids, term frequencies) of one term id (views into the mapped arrays)."""
        start, end = self.arrays.term_ptr[term_id : term_id + 2]
        return self.arrays.post_doc[start:end], self.arrays.post_tf[start:end]

    def df(self, term_id: int) -> int:
        """Document frequency of a term id in this segment."""
        ptr = self.arrays.term_ptr
        return int(ptr[term_id + 1] - ptr[term_id])

    def doc_terms(self, doc: int) -> npt.NDArray[np.uint32]:
        """The term ids of one document (the forward index)."""
        start, end = self.arrays.fwd_ptr[doc : doc + 2]
        return self.arrays.fwd_term[start:end]

    def path(self, doc: int) -> str:
        """The vault path of one document."""
        start, end = self.arrays.path_ptr[doc : doc + 2]
        return bytes(self.arrays.path_blob[start:end]).decode("utf-8", "surrogatepass")

    def find(self, path: str) -> int | None:
        """The doc id holding ``path``, or None."""
        table = self.arrays.path_key
        if table.shape[0] == 0:
            return None
        key = path_key(path)
        pos = int(np.searchsorted(table, key))
        while pos < table.shape[0] and int(table[pos]) == key:
            doc = int(self.arrays.path_doc[pos])
            if self.path(doc) == path:
                return doc
            pos += 1
        return None

    def all_paths(self) -> list[str]:
        """Every path, in doc id order (decodes the whole blob)."""
        text = bytes(self.arrays.path_blob).decode("utf-8", "surrogatepass")
        ptr = self.arrays.path_ptr
        if text.isascii():
            return [text[a:b] for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist(), strict=True)]
        return [self.path(d) for d in range(self.n_docs)]
