"""How many tokens a text costs a model, estimated generously without a tokenizer.

The project counts its budgets in characters (``ECHO_LOAD_BUDGET``, the hooks' 10,000
characters); the insight budget of SPEC §7 is in tokens (at most 500), and no model
tokenizer is a dependency. ``estimate_tokens`` leans high, so a text it puts within a
budget is within it for the byte-pair tokenizers of current models on ordinary text:

* a run of ASCII letters: one token per 4 characters, rounded up (such vocabularies hold
  most English words whole: "the" 1, "committing" 3 here, 1 or 2 there);
* a run of ASCII letters and digits holding a digit (numbers, versions, ids): one token
  per 2 characters, rounded up (numbers are split into groups of at most 3 digits, and
  ids into short pieces);
* any other character that is not a space (punctuation, symbols, letters of other
  scripts): one token each, two outside the Basic Multilingual Plane (emoji);
* spaces and line breaks: free (merged into the next word's token).

English prose comes out at roughly 1.3-1.6 estimated tokens per word, where such
tokenizers count about 1.3; what the margin costs is a little of the budget unused.
"""

from __future__ import annotations

import re

__all__ = ["estimate_tokens"]

_PIECE_RE = re.compile(r"[A-Za-z0-9]+|\S")


def estimate_tokens(text: str) -> int:
    """The estimated token count of ``text`` (module docstring)."""
    total = 0
    for piece in _PIECE_RE.findall(text):
        if piece.isascii() and piece.isalnum():
            per = 4 if piece.isalpha() else 2
            total += (len(piece) + per - 1) // per
        else:
            total += 2 if ord(piece) > 0xFFFF else 1
    return total
