"""The text rules of transcript mining: operator sentences -> what to remember.

Each rule is a small pure function of one operator sentence (or turn) and returns a
``RuleHit`` (a normalised title plus the rule's name) or ``None``. Matching is on the
start of a sentence, case-insensitive; a question (ends with ``?``) never matches; a
sentence longer than ``MAX_SENTENCE`` characters is not a statement to remember.

- ``preference``: "always X", "never X", "I prefer X", "prefer X over Y",
  "use X not Y" / "use X instead of Y" / "use X rather than Y", "don't X" / "do not X",
  "please stop X" / "stop X-ing", optionally led by "please", "and", "also", "again",
  "as I said", "remember", "from now on", "going forward", "in future" or by a
  correction's lead ("No, always X" is the preference "Always X") -> title e.g.
  "Always run ruff before committing", "Use pytest, not unittest", "Don't add type:
  ignore comments".
  "Don't worry", "never mind" and the like are not preferences.
- ``correction``: a turn that answers the agent with "no, ...", "nope", "wrong",
  "that's wrong / not right / incorrect / not what I asked", "actually, ...",
  "not X but Y", "you should have ..." -> the corrected statement (the lead word
  dropped) as title, e.g. "The config lives in pyproject.toml, not setup.cfg"; a lead
  followed by fewer than three words or by "thanks", "worries", "I don't think",
  "that's fine" and the like is a reply, not a correction.
- ``idea``: "we should later ...", "later we should", "TODO ...", "it would be nice
  to ...", "next time ...", "idea: ...", "at some point we should ...", "in the
  future we should ..." -> the idea (a "TODO:" / "idea:" lead dropped) as title.

``sentences(text)`` splits operator text: fenced code, inline quoted blocks (``>``)
and Claude Code's injected tags (``<system-reminder>``, ``<command-...>``, ...) are
removed first, then the text is cut at line breaks and at ``.``/``!``/``?`` before
a space.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["MAX_SENTENCE", "RuleHit", "correction", "idea", "preference", "sentences",
           "tidy_title"]

#: A longer sentence is prose, not a preference or idea to remember.
MAX_SENTENCE = 180

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INJECTED = re.compile(
    r"<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|bash-input|bash-stdout|bash-stderr|user-memory-input)>"
    r".*?(?:</\1>|\Z)", re.DOTALL)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = re.compile(r"^(?:(?:please|and|also|so|ok(?:ay)?|again|as i said|like i said|"
                   r"remember|from now on|going forward|in (?:the )?future|in general|"
                   r"generally)\b[,:;]?\s+)+", re.IGNORECASE)
_MARKUP = re.compile(r"^[-*+>#\s]+|^\d+[.)]\s+")

_ALWAYS = re.compile(r"^(always|never)\s+(\S.*)$", re.IGNORECASE)
_PREFER_OVER = re.compile(r"^(?:i(?:'d|\s+would|\s+really|\s+strongly)?\s+)?prefer\s+(.+?)"
                          r"\s+(?:over|to|rather than|instead of)\s+(.+)$", re.IGNORECASE)
_PREFER = re.compile(r"^i(?:'d|\s+would|\s+really|\s+strongly|\s+always)?\s+prefer\s+(\S.*)$",
                     re.IGNORECASE)
_USE_NOT = re.compile(r"^use\s+(.+?),?\s+(?:not|instead of|rather than)\s+(.+)$", re.IGNORECASE)
_DONT = re.compile(r"^(?:don'?t|do not|dont)\s+(\S.*)$", re.IGNORECASE)
_STOP = re.compile(r"^stop\s+(\w+ing\b.*)$", re.IGNORECASE)
_NOT_PREFERENCES = re.compile(
    r"^(?:don'?t|do not|dont)\s+(?:worry|bother|mind|panic|know|think|see|understand|"
    r"remember|care|get|have|need|want|like)\b|^never\s+mind\b", re.IGNORECASE)

_CORRECTION = re.compile(
    r"^(?:no|nope|wrong|incorrect)\b[,.!:;\s-]*|"
    r"^that(?:'s| is)\s+(?:wrong|not right|incorrect|not correct|not what i (?:asked|meant|"
    r"wanted))\b[,.!:;\s-]*|^actually\b[,:;\s-]*", re.IGNORECASE)
_NOT_CORRECTIONS = re.compile(
    r"(?:thanks|thank you|worries|problem|need|rush|i (?:don'?t|do not) (?:think|know|need|"
    r"want|care|mind)|(?:it|that)(?:'s| is) (?:fine|ok|okay|all right|good))\b", re.IGNORECASE)
_NOT_BUT = re.compile(r"^not\s+(.+?),?\s+but\s+(.+)$", re.IGNORECASE)
_SHOULD_HAVE = re.compile(r"^you\s+should\s*(?:have|'ve)\s+(\S.*)$", re.IGNORECASE)

_IDEA = re.compile(
    r"^(?:todo|idea)\b\s*[:-]?\s*(\S.*)$|"
    r"^((?:we|you) should (?:later|eventually|at some point)\b.*)$|"
    r"^((?:later|eventually|at some point|in the future),?\s+(?:we|you) (?:should|could)\b.*)$|"
    r"^(it would be (?:nice|good|great) (?:to|if)\b.*)$|"
    r"^(next time,?\s+\S.*)$", re.IGNORECASE)


@attrs.frozen
class RuleHit:
    """A rule's match: the normalised ``title`` and the rule's name (``rule``)."""

    title: str
    rule: str


def sentences(text: str) -> list[str]:
    """The sentences of operator ``text`` (see the module docstring), each stripped."""
    text = _INJECTED.sub(" ", _FENCE.sub(" ", text))
    out = []
    for piece in _SPLIT.split(text):
        piece = _MARKUP.sub("", piece).strip()
        if piece and not piece.startswith(("`", "|")):
            out.append(piece)
    return out


def tidy_title(text: str) -> str:
    """One line: whitespace collapsed, trailing ``.``/``!``/``,``/``;``/``:`` dropped,
    first letter upper-cased."""
    line = " ".join(text.split()).rstrip(".!,;: ")
    return line[:1].upper() + line[1:]


def _statement(sentence: str) -> str | None:
    """``sentence`` without its lead words, or ``None`` for a question or a long one."""
    sentence = sentence.strip()
    if not sentence or sentence.endswith("?") or len(sentence) > MAX_SENTENCE:
        return None
    return _LEAD.sub("", sentence).rstrip(".!;: ")


def preference(sentence: str) -> RuleHit | None:
    """An explicit operator preference in ``sentence``, or ``None``."""
    statement = _statement(sentence)
    if statement is None:
        return None
    statement = _CORRECTION.sub("", statement, count=1)  # "No, always X" states X too
    if _NOT_PREFERENCES.search(statement):
        return None
    if match := _ALWAYS.match(statement):
        return RuleHit(tidy_title(f"{match[1].lower()} {match[2]}"), "preference: always/never")
    if match := _PREFER_OVER.match(statement):
        return RuleHit(tidy_title(f"prefer {match[1]} over {match[2]}"),
                       "preference: prefer X over Y")
    if match := _PREFER.match(statement):
        return RuleHit(tidy_title(f"prefer {match[1]}"), "preference: I prefer X")
    if match := _USE_NOT.match(statement):
        return RuleHit(tidy_title(f"use {match[1]}, not {match[2]}"), "preference: use X not Y")
    if match := _DONT.match(statement):
        return RuleHit(tidy_title(f"don't {match[1]}"), "preference: don't X")
    if match := _STOP.match(statement):
        return RuleHit(tidy_title(f"stop {match[1]}"), "preference: stop X")
    return None


def correction(sentence: str) -> RuleHit | None:
    """The corrected statement when ``sentence`` (a turn's first) corrects the agent."""
    statement = _statement(sentence)
    if statement is None:
        return None
    if match := _NOT_BUT.match(statement):
        return RuleHit(tidy_title(f"{match[2]}, not {match[1]}"), "correction: not X but Y")
    if match := _SHOULD_HAVE.match(statement):
        return RuleHit(tidy_title(f"should have {match[1]}"), "correction: you should have")
    lead = _CORRECTION.match(statement)
    if lead is None:
        return None
    rest = statement[lead.end():].strip()
    if len(rest.split()) < 3 or _NOT_CORRECTIONS.match(rest):
        return None  # "No." / "Nope, not yet" / "No, thanks" carry nothing to remember
    return RuleHit(tidy_title(rest), f"correction: {lead[0].strip(' ,.!:;-').lower()}")


def idea(sentence: str) -> RuleHit | None:
    """A forward-looking idea in ``sentence``, or ``None``."""
    statement = _statement(sentence)
    if statement is None:
        return None
    match = _IDEA.match(statement)
    if match is None:
        return None
    body = next(group for group in match.groups() if group)
    if len(body.split()) < 3:
        return None
    return RuleHit(tidy_title(body), "idea: forward-looking")
