"""What the session-end tests share: a vault holding one company, Vantage Systems. A test
module takes the ``box`` fixture with ``from tests.session_end_kit import vantage_box``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.capture_kit import VaultBox

#: Proposals a bundle's reflect list takes: a preference (semantic), an update of the
#: company, a low-confidence idea (inbox).
PYTEST = {"title": "Operator prefers pytest", "kind": "semantic", "body": "Use pytest.",
          "confidence": 0.9}
RENEWAL = {"title": "Vantage Systems", "kind": "company", "body": "Renewal is in May.",
           "confidence": 0.8}
TANTIVY = {"title": "Maybe try tantivy", "kind": "concept", "body": "Could be faster.",
           "confidence": 0.4}


@pytest.fixture(name="box")
def vantage_box(tmp_path: Path) -> VaultBox:
    """Fixture ``box``: a new vault with the company "Vantage Systems" captured."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Vantage Systems", kind="company", body="vendor").ok
    return box
