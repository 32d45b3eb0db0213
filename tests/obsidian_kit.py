"""Fixtures for the Obsidian backend tests: a fake server per test whose every exchange is
checked against the OpenAPI spec when the test ends (import the fixtures you use)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_spec import assert_conforms

KEY = "test-api-key-0123456789"
#: Settle delay of the lock note in tests (the default, 0.2 s, suits real networks).
SETTLE = 0.1


@pytest.fixture
def obsidian_fake() -> Iterator[FakeObsidian]:
    """A running fake (HTTP, 127.0.0.1, random port); its traffic must conform to the spec."""
    with FakeObsidian(KEY) as fake:
        yield fake
    assert_conforms(fake.exchanges)


@pytest.fixture
def obsidian_storage(obsidian_fake: FakeObsidian) -> Iterator[ObsidianStorage]:
    """An ``ObsidianStorage`` on ``obsidian_fake`` (closed afterwards)."""
    storage = ObsidianStorage(obsidian_fake.base_url, KEY, lock_settle=SETTLE, timeout=5.0)
    yield storage
    storage.close()
