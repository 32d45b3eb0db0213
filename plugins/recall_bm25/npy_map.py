"""Memory-mapping a segment's ``.npy`` files without importing numpy.

numpy costs ~50 ms to import, more than the rest of a one-shot capture. Most of what a
capture, a removal or a lookup needs from the base segment is a few numbers (a path's doc
id, a doc's length and term ids), so ``MappedArrays`` maps each file once and answers
those through ``memoryview``s cast to the array's item type; ``to_numpy()`` wraps the
same mapped bytes as numpy arrays (no copy) for the code that computes on whole arrays
(search, merges).

An ``.npy`` file (format 1.0 to 3.0) is a magic string, a header length, a header dict
(``descr``, ``fortran_order``, ``shape``) padded to 64 bytes, then the raw C-order data.
"""

from __future__ import annotations

import mmap
import re
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugins.recall_bm25.layout import CorruptIndex

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TYPECODES", "MappedArrays"]

#: numpy ``descr`` (little-endian, as numpy writes on the machines we run on) -> the
#: ``memoryview.cast`` format of the same item.
TYPECODES = {"<i8": "q", "<u4": "I", "<u2": "H", "<f8": "d", "<i4": "i", "|u1": "B"}

_MAGIC = b"\x93NUMPY"
_DESCR = re.compile(r"""['"]descr['"]\s*:\s*['"]([^'"]+)['"]""")
_FORTRAN = re.compile(r"""['"]fortran_order['"]\s*:\s*(True|False)""")
_SHAPE = re.compile(r"""['"]shape['"]\s*:\s*\(\s*(\d*)\s*,?\s*\)""")


def _header(data: mmap.mmap, name: str) -> tuple[str, int, int]:
    """``(descr, length, data offset)`` of a mapped 1-D ``.npy`` file."""
    if data[:6] != _MAGIC or len(data) < 10:
        raise CorruptIndex(f"{name} is not an .npy file")
    major = data[6]
    if major == 1:
        (size,), start = struct.unpack("<H", data[8:10]), 10
    elif major in (2, 3):
        (size,), start = struct.unpack("<I", data[8:12]), 12
    else:
        raise CorruptIndex(f"{name} has .npy format {major}")
    text = data[start:start + size].decode("latin-1")
    descr, fortran, shape = _DESCR.search(text), _FORTRAN.search(text), _SHAPE.search(text)
    if descr is None or fortran is None or shape is None or not shape.group(1):
        raise CorruptIndex(f"{name} has an unreadable or non 1-D .npy header")
    return descr.group(1), int(shape.group(1)), start + size


class MappedArrays:
    """The arrays of one segment folder, each file mapped read-only once.

    ``expected``: array name -> (numpy descr, length); a file of another item type or
    length, or one that is not an ``.npy`` file, raises ``CorruptIndex``."""

    def __init__(self, folder: Path, expected: dict[str, tuple[str, int]]) -> None:
        self._maps: dict[str, tuple[mmap.mmap, int, int, str]] = {}
        self._views: dict[str, memoryview] = {}
        for name, (descr, length) in expected.items():
            path = folder / f"{name}.npy"
            try:
                with open(path, "rb") as handle:
                    data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as exc:
                if isinstance(exc, FileNotFoundError) and not folder.is_dir():
                    raise
                raise CorruptIndex(f"cannot map {path.name}: {exc}") from exc
            found, count, offset = _header(data, path.name)
            itemsize = struct.calcsize(TYPECODES.get(descr, "x"))
            if found != descr or count != length or len(data) < offset + count * itemsize:
                raise CorruptIndex(f"{path.name} is {found}[{count}], expected {descr}[{length}]")
            self._maps[name] = (data, offset, count, descr)

    def view(self, name: str) -> memoryview:
        """The array ``name`` as a read-only typed ``memoryview`` over the mapped file."""
        found = self._views.get(name)
        if found is None:
            data, offset, count, descr = self._maps[name]
            code = TYPECODES[descr]
            raw = memoryview(data)[offset:offset + count * struct.calcsize(code)]
            if sys.byteorder != "little" and code != "B":  # pragma: no cover - big-endian hosts
                import numpy as np

                raw = memoryview(np.frombuffer(raw, dtype=descr).astype(descr[1:]).tobytes())
            found = self._views[name] = raw.cast(code)  # type: ignore[call-overload]
        return found

    def to_numpy(self, name: str) -> np.ndarray[Any, Any]:
        """The array ``name`` as a read-only numpy array over the same mapped bytes."""
        import numpy as np

        data, offset, count, descr = self._maps[name]
        return np.frombuffer(data, dtype=np.dtype(descr), count=count, offset=offset)
