"""all-MiniLM-L6-v2's weights, laid out for the numpy forward pass in ``encoder``.

The ``.safetensors`` file is memory-mapped read-only (its format: an 8-byte little-endian
header length, a JSON header naming each tensor's dtype, shape and byte range, then the
raw little-endian data). The word embedding table (30,522 x 384, 47 MB) stays mapped, so
only the rows of the tokens seen are paged in and the page cache is shared between
processes; the per-layer matrices are copied once into the layout the matmuls want:
transposed to ``(in, out)``, C-contiguous, float32, with Q, K and V fused into one
``(384, 1152)`` matrix whose Q third is pre-scaled by ``1/sqrt(head_dim)``.
"""

from __future__ import annotations

import json
import mmap
import struct
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

__all__ = ["BertConfig", "BertWeights", "LayerWeights", "load_weights", "read_safetensors"]

F32 = npt.NDArray[np.float32]

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


class WeightsUnreadable(ValueError):
    """The model file is not a safetensors file of the expected BERT layout."""


@attrs.frozen
class BertConfig:
    """The few numbers of ``config.json`` the forward pass needs."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    max_positions: int
    eps: float

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """Read ``config.json``; raises ``WeightsUnreadable`` for a non-BERT or gelu-less model."""
        cfg = json.loads(path.read_text("utf-8"))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise WeightsUnreadable(f"hidden_act {cfg.get('hidden_act')!r} is not gelu")
        return cls(hidden=int(cfg["hidden_size"]), heads=int(cfg["num_attention_heads"]),
                   layers=int(cfg["num_hidden_layers"]),
                   intermediate=int(cfg["intermediate_size"]),
                   max_positions=int(cfg["max_position_embeddings"]),
                   eps=float(cfg.get("layer_norm_eps", 1e-12)))


@attrs.frozen(eq=False)
class LayerWeights:
    """One encoder layer: matrices ``(in, out)`` float32 C-contiguous, vectors float32."""

    qkv: F32          # (hidden, 3*hidden), Q columns pre-scaled by 1/sqrt(head_dim)
    qkv_bias: F32     # (3*hidden,), Q part pre-scaled likewise
    out: F32          # (hidden, hidden) attention output projection
    out_bias: F32
    ln1_gain: F32
    ln1_bias: F32
    up: F32           # (hidden, intermediate)
    up_bias: F32
    down: F32         # (intermediate, hidden)
    down_bias: F32
    ln2_gain: F32
    ln2_bias: F32


@attrs.frozen(eq=False)
class BertWeights:
    """The whole model: embeddings (word table memory-mapped) and the encoder layers."""

    config: BertConfig
    word: F32            # (vocab, hidden), read-only memory map
    position: F32        # (max_positions, hidden) with token type 0 already added
    emb_ln_gain: F32
    emb_ln_bias: F32
    layers: tuple[LayerWeights, ...]


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of the safetensors file ``path`` as a read-only array over one shared
    memory map (no copy). Raises ``WeightsUnreadable`` on a malformed file."""
    with path.open("rb") as handle:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if len(data) < 8:
        raise WeightsUnreadable(f"{path} is too short for a safetensors file")
    (size,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + size])
    except ValueError as exc:
        raise WeightsUnreadable(f"{path} has an unreadable header") from exc
    base = 8 + size
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise WeightsUnreadable(f"{path}: tensor {name} has dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        shape = tuple(int(n) for n in info["shape"])
        array = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"),
                              count=(end - begin) // np.dtype(dtype).itemsize,
                              offset=base + begin)
        tensors[name] = array.reshape(shape)
    return tensors


def _f32(array: npt.NDArray[Any]) -> F32:
    return np.ascontiguousarray(array, dtype=np.float32)


def load_weights(folder: Path) -> BertWeights:
    """Load ``config.json`` and ``model.safetensors`` of a BERT sentence encoder from
    ``folder`` (with or without the ``bert.`` prefix). Raises ``WeightsUnreadable``."""
    config = BertConfig.from_file(folder / "config.json")
    raw = read_safetensors(folder / "model.safetensors")
    prefix = "" if "embeddings.word_embeddings.weight" in raw else "bert."

    def get(name: str) -> npt.NDArray[Any]:
        try:
            return raw[prefix + name]
        except KeyError:
            raise WeightsUnreadable(f"model.safetensors has no tensor {prefix + name}") from None

    scale = np.float32(1.0 / np.sqrt(config.hidden // config.heads))
    layers = []
    for n in range(config.layers):
        p = f"encoder.layer.{n}."
        att = p + "attention."
        qkv = np.concatenate([get(att + f"self.{w}.weight").T for w in ("query", "key", "value")],
                             axis=1).astype(np.float32)
        qkv_bias = np.concatenate([get(att + f"self.{w}.bias") for w in ("query", "key", "value")]
                                  ).astype(np.float32)
        qkv[:, :config.hidden] *= scale
        qkv_bias[:config.hidden] *= scale
        layers.append(LayerWeights(
            qkv=np.ascontiguousarray(qkv), qkv_bias=qkv_bias,
            out=_f32(get(att + "output.dense.weight").T), out_bias=_f32(get(att + "output.dense.bias")),
            ln1_gain=_f32(get(att + "output.LayerNorm.weight")),
            ln1_bias=_f32(get(att + "output.LayerNorm.bias")),
            up=_f32(get(p + "intermediate.dense.weight").T),
            up_bias=_f32(get(p + "intermediate.dense.bias")),
            down=_f32(get(p + "output.dense.weight").T), down_bias=_f32(get(p + "output.dense.bias")),
            ln2_gain=_f32(get(p + "output.LayerNorm.weight")),
            ln2_bias=_f32(get(p + "output.LayerNorm.bias")),
        ))
    word = get("embeddings.word_embeddings.weight")
    if word.dtype != np.float32:
        word = _f32(word)
    position = _f32(get("embeddings.position_embeddings.weight")
                    + get("embeddings.token_type_embeddings.weight")[0])
    return BertWeights(config=config, word=word, position=position,
                       emb_ln_gain=_f32(get("embeddings.LayerNorm.weight")),
                       emb_ln_bias=_f32(get("embeddings.LayerNorm.bias")), layers=tuple(layers))
