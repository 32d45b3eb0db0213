"""Operator frustration in a prompt: a small, fixed lexicon (deterministic, no model).

``frustration_signal(prompt, previous)`` names the first signal a prompt shows, in
``LEXICON`` order, looking only at its first ``LOOKED_AT`` characters (a pasted log that
says "still failing" further down is not the operator speaking):

* ``wrong`` — "no, ...", "that's wrong", "this is incorrect";
* ``not-what-i-asked`` — "not what I asked / wanted / meant";
* ``stop`` — "stop" alone or with "it / now / that / please..." ("stop.", "stop it
  now!"; not "stop the server") or "stop doing / changing / editing ...";
* ``again`` — "again?", "same error again";
* ``already-said`` — "I already said", "I told you", "how many times", "for the last time";
* ``still-broken`` — "still not working / broken / failing / wrong";
* ``undo`` — "undo that", "revert it", "roll back this";
* ``swearing`` — "wtf", "ffs", "dammit";
* ``repeated-prompt`` — the prompt repeats the session's previous prompt (same words,
  case and punctuation aside; at least ``REPEAT_MIN_WORDS`` words, so "continue" twice
  is not one).
"""

from __future__ import annotations

import re

__all__ = ["LEXICON", "LOOKED_AT", "REPEAT_MIN_WORDS", "frustration_signal"]

LOOKED_AT = 300
REPEAT_MIN_WORDS = 3
_FLAGS = re.IGNORECASE
LEXICON: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx, _FLAGS)) for name, rx in (
    ("wrong", (r"^\W*no\s*[,.!]|\b(?:that'?s|that is|this is|it'?s|you'?re|you are)\s+"
               r"(?:wrong|not right|incorrect)\b")),
    ("not-what-i-asked", r"\bnot what i (?:asked|wanted|meant|said)\b"),
    ("stop", (r"^\W*stop\b(?:\W+(?:it|now|that|this|please|already|right|there))*\W*$|"
              r"\bstop (?:doing|changing|touching|editing|deleting)\b")),
    ("again", r"\bagain\s*[?!]|\b(?:same|this) (?:error|problem|issue|bug|mistake) again\b"),
    ("already-said", (r"\bi (?:already )?(?:said|told you)\b|\bhow many times\b|"
                      r"\bfor the last time\b")),
    ("still-broken", r"\bstill (?:not working|doesn'?t work|broken|failing|fails|wrong)\b"),
    ("undo", r"^\W*(?:undo|revert|roll ?back) (?:that|it|this|your)\b"),
    ("swearing", r"\b(?:wtf|ffs|dammit|damn it)\b"),
))
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def frustration_signal(prompt: str, previous: str | None = None) -> str | None:
    """The signal ``prompt`` shows (see the module docstring), or None; ``previous``: the
    session's prompt before it, if any."""
    head = prompt[:LOOKED_AT].replace("\u2019", "'")
    for name, rx in LEXICON:
        if rx.search(head):
            return name
    if previous is not None:
        words = _words(prompt[:4000])
        if len(words) >= REPEAT_MIN_WORDS and words == _words(previous[:4000]):
            return "repeated-prompt"
    return None
