"""recall_hybrid: the ``hybrid`` ranker, dense all-MiniLM-L6-v2 vectors fused with BM25.

Engine modules (numpy, tokenizers and the model package are imported only when used):
``minilm.MiniLmEmbedder`` (sentence vectors), ``vector_store.VectorStore`` (persistent,
crash-safe vectors by path), ``deps.EmbedderMissing`` (the ``hybrid`` extra is absent).
"""
