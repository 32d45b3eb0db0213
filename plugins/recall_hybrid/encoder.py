"""The BERT encoder forward pass in numpy float32: token ids -> pooled sentence vectors.

``encode(weights, ids, lengths)`` runs the 6 layers on one padded batch and returns the
mean of each row's valid token states (the attention mask), L2-normalised — exactly what
sentence-transformers computes for all-MiniLM-L6-v2. Speed comes from keeping everything
float32, one fused QKV matmul per layer, pre-transposed weights, and running the
feed-forward block (up-projection, gelu, down-projection) on row chunks small enough that
the 1,536-wide intermediate stays in cache while gelu's dozen elementwise passes run over
it. gelu is the exact erf form BERT was trained with; erf is Abramowitz & Stegun 7.1.26
(max abs error 1.5e-7 in float64, 5e-7 in float32), vectorised, no scipy.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plugins.recall_hybrid.weights import BertWeights, LayerWeights

__all__ = ["FFN_CHUNK_ROWS", "encode", "gelu_erf_", "gelu_tanh_", "layer_norm_"]

F32 = npt.NDArray[np.float32]

#: Token rows per feed-forward chunk: 128 x 1,536 float32 = 768 KB, within L2.
FFN_CHUNK_ROWS = 128

_AS_P_SCALED = np.float32(0.3275911 * np.sqrt(0.5))
_AS_HALF_A = tuple(np.float32(0.5 * a) for a in (1.061405429, -1.453152027, 1.421413741,
                                                 -0.284496736, 0.254829592))
_HALF = np.float32(0.5)
_MINUS_HALF = np.float32(-0.5)
_ONE = np.float32(1.0)
_ZERO = np.float32(0.0)
_MASKED = np.float32(-1e30)
#: A row sum below this means the block shift underflowed the row (e^-69).
_SAFE_SUM = 1e-30
#: exp(-80) = 1.8e-35 is a normal float32: below it exp would give slow subnormals.
_EXP_FLOOR = np.float32(-80.0)


def gelu_erf_(x: F32, a: F32, t: F32, z: F32) -> None:
    """``x <- x * Phi(x)`` in place (exact gelu); ``a``, ``t``, ``z``: scratch arrays of
    ``x``'s shape. With ``q = Phi(-|x|) = 0.5 erfc(|x|/sqrt 2)``, ``x Phi(x)`` is
    ``max(x, 0) - |x| q`` for either sign; ``q = poly(t) exp(-x^2/2)`` with
    ``t = 1 / (1 + p |x|/sqrt 2)`` (A&S 7.1.26, coefficients pre-halved)."""
    np.abs(x, out=a)
    np.multiply(a, _AS_P_SCALED, out=t)
    t += _ONE
    np.reciprocal(t, out=t)
    c5, c4, c3, c2, c1 = _AS_HALF_A
    np.multiply(t, c5, out=z)            # z <- ((((c5 t + c4) t + c3) t + c2) t + c1) t
    z += c4
    z *= t
    z += c3
    z *= t
    z += c2
    z *= t
    z += c1
    z *= t
    np.multiply(a, _MINUS_HALF, out=t)
    t *= a
    np.exp(t, out=t)                     # t <- exp(-x^2/2)
    z *= t
    z *= a                               # z = |x| q
    np.maximum(x, _ZERO, out=x)
    x -= z


def gelu_tanh_(x: F32, a: F32, t: F32, z: F32) -> None:
    """``x <- 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` in place (the tanh
    approximation of gelu, for comparison); ``a``/``t``/``z`` are scratch arrays."""
    del a, t
    np.square(x, out=z)
    z *= np.float32(0.044715)
    z += _ONE
    z *= x
    z *= np.float32(np.sqrt(2.0 / np.pi))
    np.tanh(z, out=z)
    z += _ONE
    z *= _HALF
    x *= z


def layer_norm_(x: F32, gain: F32, bias: F32, eps: float) -> None:
    """Normalise each row of the 2-D ``x`` in place over its last axis, then scale/shift."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= gain
    x += bias


def _softmax_(scores: F32, *, per_row: bool = False) -> bool:
    """Softmax over the last axis of ``scores`` (B, H, T, T) in place; False (``scores``
    then garbage) when the fast shift underflowed a row and the caller must redo it with
    ``per_row=True``.

    The fast shift is the max of each (text, head) block, not of each row: numpy's max
    over a 32-wide last axis costs 10x the block max. Shifted scores are floored at -80
    (exp would give slow subnormals below ~-87; exp(-80) is 2e-35, nothing next to a
    row's own max). A row whose max lies over 69 below its block's has a sum under
    ``_SAFE_SUM``: never seen with this model, but then the batch is redone per row."""
    batch, heads, seq, _ = scores.shape
    if per_row:
        scores -= scores.max(axis=-1, keepdims=True)
    else:
        scores -= scores.reshape(batch, heads, -1).max(axis=-1)[:, :, None, None]
    np.maximum(scores, _EXP_FLOOR, out=scores)
    np.exp(scores, out=scores)
    sums = np.matmul(scores, np.ones(seq, dtype=np.float32))          # (B, H, T)
    if not per_row and float(sums.min()) < _SAFE_SUM:
        return False
    np.reciprocal(sums, out=sums)
    scores *= sums[..., None]
    return True


def _attention(x: F32, lw: LayerWeights, bias: F32 | None, batch: int, seq: int,
               heads: int) -> F32:
    """Self-attention of ``x`` (batch*seq, hidden) -> the context (batch*seq, hidden),
    before the output projection. ``bias`` (batch, 1, 1, seq) masks padding keys (None:
    no row is padded)."""
    hidden = x.shape[1]
    dh = hidden // heads
    qkv = x @ lw.qkv
    qkv += lw.qkv_bias
    parts = qkv.reshape(batch, seq, 3, heads, dh)
    q = parts[:, :, 0].transpose(0, 2, 1, 3)          # (B, H, T, dh), already scaled
    k = parts[:, :, 1].transpose(0, 2, 3, 1)          # (B, H, dh, T)
    v = parts[:, :, 2].transpose(0, 2, 1, 3)          # (B, H, T, dh)
    scores = np.matmul(q, k)                          # (B, H, T, T)
    if bias is not None:
        scores += bias
    if not _softmax_(scores):
        scores = np.matmul(q, k)
        if bias is not None:
            scores += bias
        _softmax_(scores, per_row=True)
    context = np.matmul(scores, v)                    # (B, H, T, dh)
    return np.ascontiguousarray(context.transpose(0, 2, 1, 3)).reshape(batch * seq, hidden)


def _feed_forward_(x: F32, lw: LayerWeights, eps: float, exact: bool) -> None:
    """``x <- LayerNorm(x + down(gelu(up(x))))`` in place, by row chunks."""
    rows = x.shape[0]
    width = lw.up.shape[1]
    step = min(FFN_CHUNK_ROWS, rows)
    h = np.empty((step, width), dtype=np.float32)
    a = np.empty_like(h)
    t = np.empty_like(h)
    z = np.empty_like(h)
    out = np.empty((step, x.shape[1]), dtype=np.float32)
    gelu = gelu_erf_ if exact else gelu_tanh_
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        n = stop - start
        hv, av, tv, zv, ov = h[:n], a[:n], t[:n], z[:n], out[:n]
        xv = x[start:stop]
        np.matmul(xv, lw.up, out=hv)
        hv += lw.up_bias
        gelu(hv, av, tv, zv)
        np.matmul(hv, lw.down, out=ov)
        ov += lw.down_bias
        xv += ov
        layer_norm_(xv, lw.ln2_gain, lw.ln2_bias, eps)


def encode(weights: BertWeights, ids: npt.NDArray[np.int32], lengths: npt.NDArray[np.int32],
           *, exact_gelu: bool = True) -> F32:
    """Sentence vectors of one batch: ``ids`` (batch, seq) padded token ids (rows of
    ``lengths[i]`` valid tokens, the rest padding), -> float32 (batch, hidden), each row
    the mean of its valid token states, L2-normalised. ``seq`` must not exceed the
    model's ``max_positions``."""
    cfg = weights.config
    batch, seq = ids.shape
    hidden = cfg.hidden
    valid = np.arange(seq, dtype=np.int32)[None, :] < lengths[:, None]   # (B, T) bool
    x = weights.word[ids.reshape(-1)]                                     # copy, float32
    x3 = x.reshape(batch, seq, hidden)
    x3 += weights.position[:seq]
    layer_norm_(x, weights.emb_ln_gain, weights.emb_ln_bias, cfg.eps)
    bias = None
    if int(lengths.min()) < seq:
        bias = np.where(valid, _ZERO, _MASKED).astype(np.float32)[:, None, None, :]
    for lw in weights.layers:
        context = _attention(x, lw, bias, batch, seq, cfg.heads)
        attn = context @ lw.out
        attn += lw.out_bias
        attn += x
        layer_norm_(attn, lw.ln1_gain, lw.ln1_bias, cfg.eps)
        x = attn
        _feed_forward_(x, lw, cfg.eps, exact_gelu)
    mask = valid.astype(np.float32)
    pooled: F32 = np.einsum("bt,bth->bh", mask, x.reshape(batch, seq, hidden))
    norms = np.sqrt(np.einsum("bh,bh->b", pooled, pooled))[:, None]
    pooled /= np.maximum(norms, np.float32(1e-12))
    return pooled
