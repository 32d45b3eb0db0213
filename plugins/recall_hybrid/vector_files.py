"""The on-disk formats of the vector store: one base file and one append-only delta log.

Base file ``vectors.bin`` (rewritten whole, atomically: temp file, fsync, ``os.replace``,
fsync of the folder)::

    b"ECHOVEC1" | u32 header length | header JSON | zero padding to a 64-byte boundary
    | matrix: count x dims little-endian float32, C order | paths: JSON list of strings

The header holds ``schema``, ``model_id``, ``dims``, ``count``, ``gen`` (a random id of
this base), and the byte offsets/lengths of the matrix and the paths. The matrix is
memory-mapped read-only, so opening a 100k x 384 store reads ~4 MB of paths, not 150 MB.

Delta log ``delta.log`` (appended under the store's exclusive lock, fsynced per call)::

    b"ECHOVLG1" | u32 dims | 16-byte gen of the base it applies to
    then records: u32 payload length | u32 crc32(op + payload) | u8 op | payload
    op 1 (upsert): u32 path length | path UTF-8 | dims x float32;  op 2 (remove): path UTF-8

A record cut short by a kill (or failing its crc) ends the log: readers stop there and
the next writer truncates it. A log whose gen is not the base's is left over from a
compaction killed between its two replaces; the base already holds it, so it is ignored.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from echo_core import fsync_dir, temp_name

__all__ = ["BaseFile", "LogRecord", "StoreUnreadable", "append_records", "encode_record",
           "read_base", "read_log", "replace_atomically", "side_file_head", "side_file_header",
           "write_base", "write_empty_log"]

F32 = npt.NDArray[np.float32]

#: Format version of both files: another value means "rebuild".
SCHEMA = 1
BASE_NAME, LOG_NAME, LOCK_NAME = "vectors.bin", "delta.log", "lock"
_BASE_MAGIC, _LOG_MAGIC = b"ECHOVEC1", b"ECHOVLG1"
_LOG_HEAD = struct.Struct("<8sI16s")
_REC_HEAD = struct.Struct("<IIB")
_U32 = struct.Struct("<I")
OP_UPSERT, OP_REMOVE = 1, 2
#: Bytes per ``os.write`` of the matrix (a kill can land between any two).
WRITE_CHUNK = 1 << 20


class StoreUnreadable(ValueError):
    """A store file is malformed, truncated or of another schema."""


@attrs.frozen(eq=False)
class BaseFile:
    """A mapped base: its header fields, the read-only matrix and the paths by row."""

    model_id: str
    dims: int
    gen: bytes
    matrix: F32
    paths: list[str]


@attrs.frozen(eq=False)
class LogRecord:
    """One delta record: an upsert (``vector`` set) or a removal (``vector`` None)."""

    path: str
    vector: F32 | None


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.write(fd, view[:WRITE_CHUNK])
        view = view[written:]


def replace_atomically(folder: Path, name: str, parts: list[bytes | memoryview]) -> None:
    """Write ``parts`` to ``folder/name`` so a kill at any instant leaves the old file or
    the new one, never a mix (temp file, fsync, rename, fsync of the folder)."""
    temp = folder / temp_name(name)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for part in parts:
            _write_all(fd, part)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(temp, folder / name)
    fsync_dir(folder)


def side_file_head(magic: bytes, header: dict[str, Any]) -> bytes:
    """The head of a file kept beside a base (its sketch, its moments): ``magic`` (8
    bytes) | u32 header length | JSON ``header`` | zero padding to a 64-byte boundary,
    where its arrays start."""
    text = json.dumps(header).encode()
    start = -(-(12 + len(text)) // 64) * 64
    return magic + _U32.pack(len(text)) + text + b"\0" * (start - 12 - len(text))


def side_file_header(data: bytes | mmap.mmap, magic: bytes, gen: bytes, count: int,
                     dims: int) -> tuple[dict[str, Any], int] | None:
    """``(header, offset of the arrays)`` of a ``side_file_head`` in ``data``, when it has
    ``magic`` and describes the base ``gen`` of ``count`` x ``dims``; None otherwise (not
    such a file, torn, another base's)."""
    if len(data) < 12 or data[:8] != magic:
        return None
    try:
        (size,) = _U32.unpack(data[8:12])
        header = json.loads(data[12:12 + size])
        if (not isinstance(header, dict) or bytes.fromhex(header["gen"]) != gen
                or int(header["count"]) != count or int(header["dims"]) != dims):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    return header, -(-(12 + size) // 64) * 64


def write_base(folder: Path, *, model_id: str, dims: int, gen: bytes, paths: list[str],
               matrix: F32) -> None:
    """Atomically replace the base file with ``matrix`` (len(paths) x dims) and ``paths``."""
    data = np.ascontiguousarray(matrix, dtype="<f4")
    if data.shape != (len(paths), dims):
        raise ValueError(f"matrix shape {data.shape} != ({len(paths)}, {dims})")
    paths_blob = json.dumps(paths, ensure_ascii=False).encode("utf-8")
    header: dict[str, Any] = {"schema": SCHEMA, "model_id": model_id, "dims": dims,
                              "count": len(paths), "gen": gen.hex(), "dtype": "<f4"}
    # The offsets depend on the header's own length: pad the header to a fixed size.
    for size in (512, 4096):
        start = -(-(12 + size) // 64) * 64
        header.update(matrix_offset=start, paths_offset=start + data.nbytes,
                      paths_length=len(paths_blob))
        text = json.dumps(header).encode("utf-8")
        if len(text) <= size:
            break
    else:
        raise ValueError("model id too long for the store header")
    head = _BASE_MAGIC + _U32.pack(size) + text.ljust(size) + b"\0" * (start - 12 - size)
    body = data.tobytes() if data.size == 0 else data.data.cast("B")  # an empty vault
    replace_atomically(folder, BASE_NAME, [head, body, paths_blob])


def read_base(folder: Path) -> BaseFile | None:
    """The base file of ``folder`` mapped read-only, or None when there is none.

    Raises ``StoreUnreadable`` when it is malformed, truncated or of another schema."""
    try:
        fd = os.open(folder / BASE_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < 12:
            raise StoreUnreadable("the base file is truncated")
        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    if data[:8] != _BASE_MAGIC:
        raise StoreUnreadable("the base file has no vector store magic")
    (hsize,) = _U32.unpack(data[8:12])
    try:
        header = json.loads(data[12:12 + hsize])
        if header["schema"] != SCHEMA or header["dtype"] != "<f4":
            raise StoreUnreadable(f"the base file has schema {header['schema']}")
        count, dims = int(header["count"]), int(header["dims"])
        start, pstart = int(header["matrix_offset"]), int(header["paths_offset"])
        if pstart != start + count * dims * 4 or pstart + header["paths_length"] != size:
            raise StoreUnreadable("the base file's size does not match its header")
        paths = json.loads(data[pstart:pstart + header["paths_length"]])
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreUnreadable(f"the base file's header is unreadable: {exc}") from exc
    if not isinstance(paths, list) or len(paths) != count:
        raise StoreUnreadable("the base file's paths do not match its count")
    matrix = np.frombuffer(data, dtype="<f4", count=count * dims, offset=start)
    return BaseFile(model_id=str(header["model_id"]), dims=dims, gen=bytes.fromhex(header["gen"]),
                    matrix=matrix.reshape(count, dims), paths=paths)


def write_empty_log(folder: Path, *, dims: int, gen: bytes) -> None:
    """Atomically replace the delta log with an empty one for the base ``gen``."""
    replace_atomically(folder, LOG_NAME, [_LOG_HEAD.pack(_LOG_MAGIC, dims, gen)])


def encode_record(path: str, vector: F32 | None) -> bytes:
    """The bytes of one log record (an upsert of ``vector``, or a removal when None)."""
    raw = path.encode("utf-8")
    if vector is None:
        op, payload = OP_REMOVE, raw
    else:
        vec = np.ascontiguousarray(vector, dtype="<f4").tobytes()
        op, payload = OP_UPSERT, _U32.pack(len(raw)) + raw + vec
    crc = zlib.crc32(bytes([op]) + payload)
    return _REC_HEAD.pack(len(payload), crc, op) + payload


def read_log(folder: Path, *, dims: int, gen: bytes, offset: int = 0
             ) -> tuple[list[LogRecord], int, bool]:
    """Records of the delta log from byte ``offset`` (0: from its start) up to the first
    torn or corrupt one: ``(records, end offset of the last good record, log usable)``.

    ``usable`` is False when the log is missing, or for another base ``gen``/``dims``:
    its records then do not apply (``records`` is empty)."""
    try:
        with open(folder / LOG_NAME, "rb") as handle:
            head = handle.read(_LOG_HEAD.size)
            if len(head) < _LOG_HEAD.size or _LOG_HEAD.unpack(head) != (_LOG_MAGIC, dims, gen):
                return [], 0, False
            start = max(offset, _LOG_HEAD.size)
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return [], 0, False
    records = []
    end = 0
    for record, stop in _records(data, dims):
        records.append(record)
        end = stop
    return records, start + end, True


def _records(data: bytes, dims: int) -> Iterator[tuple[LogRecord, int]]:
    pos, vec_bytes = 0, dims * 4
    while pos + _REC_HEAD.size <= len(data):
        length, crc, op = _REC_HEAD.unpack_from(data, pos)
        body = pos + _REC_HEAD.size
        payload = data[body:body + length]
        if len(payload) < length or zlib.crc32(bytes([op]) + payload) != crc:
            return
        try:
            if op == OP_REMOVE:
                record = LogRecord(payload.decode("utf-8"), None)
            elif op == OP_UPSERT:
                (plen,) = _U32.unpack_from(payload, 0)
                if length != 4 + plen + vec_bytes:
                    return
                path = payload[4:4 + plen].decode("utf-8")
                vec = np.frombuffer(payload, dtype="<f4", count=dims, offset=4 + plen)
                record = LogRecord(path, vec.astype(np.float32))
            else:
                return
        except UnicodeDecodeError:
            return
        pos = body + length
        yield record, pos


def append_records(folder: Path, blob: bytes, *, good_end: int) -> int:
    """Append encoded records to the delta log at ``good_end`` (the end of its last good
    record, as the caller's refresh under the exclusive lock found it: a torn tail left
    by a killed writer is cut off first), fsync, and return the new end."""
    fd = os.open(folder / LOG_NAME, os.O_WRONLY)
    try:
        if os.fstat(fd).st_size != good_end:
            os.ftruncate(fd, good_end)
        os.lseek(fd, good_end, os.SEEK_SET)
        _write_all(fd, blob)
        os.fsync(fd)
    finally:
        os.close(fd)
    return good_end + len(blob)
