"""stem_porterlite: the default tokenizer, ``porterlite`` (SPEC §3.1, §3.2).

Registers ``PorterLiteTokenizer`` under the name ``porterlite`` (config
``tokenizer = "porterlite"``). Imported at start-up, so the tokenizer module (regex,
stemmer, stopwords) is imported only when the hook runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from echo_core import Tokenizer

NAME = "porterlite"


@hookimpl
def register_tokenizers(register: Register[Tokenizer]) -> None:
    """Register the ``porterlite`` tokenizer (one shared, stateless instance)."""
    from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

    register(NAME, PorterLiteTokenizer())
