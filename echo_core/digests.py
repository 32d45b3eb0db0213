"""SHA-256 and BLAKE2b constructors that do not load OpenSSL.

``hashlib`` imports ``_hashlib`` (OpenSSL) on import: ~2-3 ms of a one-shot CLI process
that hashes a few short strings (the state dir's name, a note's content hash). CPython
ships its own implementations of both algorithms (``_sha256``, ``_sha2`` from 3.12;
``_blake2``): the digests are the same bytes. When an interpreter lacks them, hashlib's
are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["blake2b", "sha256"]

if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # pragma: no cover - other interpreters
        try:
            from _sha2 import sha256  # CPython 3.12+
        except ImportError:
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import blake2b
