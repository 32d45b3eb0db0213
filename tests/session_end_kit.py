"""What the session-end tests share: a vault holding one company, Vantage Systems. A test
module takes the ``box`` fixture with ``from tests.session_end_kit import vantage_box``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.capture_kit import VaultBox


@pytest.fixture(name="box")
def vantage_box(tmp_path: Path) -> VaultBox:
    """Fixture ``box``: a new vault with the company "Vantage Systems" captured."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Vantage Systems", kind="company", body="vendor").ok
    return box
