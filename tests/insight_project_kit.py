"""Shared by the insight-by-project tests: the tester's two insights (one naming a
project's secret host, one true everywhere) and repository folders to start hooks in."""

from __future__ import annotations

from pathlib import Path

ALPHA = ("In alphaproj the secret staging host is 10.1.2.3, deploy with make staging-deploy "
         "after the smoke tests.")
SHARED = "Staging deploys need the VPN up before make staging-deploy is run."


def repo(tmp_path: Path, name: str) -> Path:
    """A repository folder ``name`` (it holds ``.git``) and a subfolder to start in."""
    root = tmp_path / "proj" / name
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    return root / "src"
