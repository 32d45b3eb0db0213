"""The OpenSSL-free digests are hashlib's, byte for byte: state dirs, content hashes and
index keys made before and after stay the same."""

from __future__ import annotations

import hashlib

import pytest

from echo_core import digests
from echo_core.config import state_dir_for

SAMPLES = [b"", b"abc", "Ada Lovelace — née Byron\n".encode(), bytes(range(256)) * 300]


@pytest.mark.parametrize("data", SAMPLES)
def test_sha256_is_hashlibs(data: bytes) -> None:
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    incremental = digests.sha256()
    incremental.update(data[:7])
    incremental.update(data[7:])
    assert incremental.hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("data", SAMPLES)
def test_blake2b_is_hashlibs(data: bytes) -> None:
    for kwargs in ({"digest_size": 8}, {"digest_size": 8, "person": b"path"},
                   {"digest_size": 16}):
        assert digests.blake2b(data, **kwargs).digest() == hashlib.blake2b(data, **kwargs).digest()


def test_a_vaults_state_dir_keeps_its_name() -> None:
    # sha256("abc") begins ba7816bf8f01cfea: the folder name every existing install uses
    assert state_dir_for("/state", "abc").name == "ba7816bf8f01cfea"
