"""Name normalisation and similarity, shared by resolve, the gate and auto-linking.

* ``name_key`` folds case, hyphens, underscores, punctuation and spacing, so
  "Vantage-Systems", "vantage systems" and "Vantage Systems!" share one key.
* ``name_tokens`` is the set of meaningful words of a name: stopwords and legal-form
  suffixes (inc, ltd, llc, ...) removed, simple plurals folded.
* ``token_set_similarity`` is the share of the smaller name's tokens found in the other
  (1.0 when one name's tokens contain the other's).
"""

from __future__ import annotations

import re
import unicodedata

from echo_core.errors import usage_error

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)

NAME_STOPWORDS = frozenset(
    ["the", "and", "of", "for", "in", "on", "at", "to", "by", "with", "from", "or", "via", "de", "la", "le", "inc", "incorporated", "ltd", "limited", "llc", "llp", "plc", "corp", "corporation", "co", "gmbh", "ag", "sa", "bv"]
)

#: Words too common to ever be a link target on their own (SPEC §2.1 step 6).
COMMON_WORDS = frozenset(
    ["about", "above", "after", "again", "against", "all", "also", "always", "among", "another", "any", "anything", "area", "around", "back", "because", "been", "before", "being", "below", "best", "better", "between", "both", "build", "call", "came", "can", "case", "change", "check", "close", "code", "come", "could", "data", "date", "day", "days", "default", "does", "doing", "done", "down", "each", "early", "easy", "else", "end", "even", "every", "example", "fact", "file", "find", "first", "fix", "follow", "form", "found", "free", "from", "full", "general", "get", "give", "goal", "going", "good", "great", "group", "have", "help", "here", "high", "home", "how", "idea", "important", "info", "issue", "item", "just", "keep", "kind", "know", "last", "late", "later", "lead", "left", "less", "level", "life", "like", "line", "list", "little", "live", "local", "long", "look", "lot", "made", "main", "make", "many", "may", "meeting", "memory", "might", "mind", "more", "most", "move", "much", "must", "name", "need", "never", "new", "next", "nice", "none", "note", "notes", "nothing", "now", "number", "off", "often", "old", "once", "only", "open", "order", "other", "our", "out", "over", "own", "page", "part", "people", "place", "plan", "plans", "point", "possible", "post", "problem", "project", "question", "quick", "quite", "rather", "read", "real", "really", "reason", "record", "right", "room", "run", "said", "same", "save", "say", "see", "seem", "self", "send", "session", "set", "several", "should", "show", "side", "since", "small", "some", "something", "soon", "start", "state", "status", "step", "still", "stop", "story", "such", "sure", "system", "take", "task", "team", "test", "than", "thank", "that", "their", "them", "then", "there", "these", "thing", "things", "think", "this", "those", "though", "thought", "through", "time", "today", "together", "told", "too", "top", "topic", "true", "try", "turn", "type", "under", "until", "update", "upon", "used", "user", "using", "value", "very", "view", "want", "was", "way", "week", "well", "went", "were", "what", "when", "where", "which", "while", "who", "whole", "why", "will", "with", "within", "without", "word", "work", "world", "would", "write", "year", "yes", "yet", "you", "your"]
) | NAME_STOPWORDS


def fold(text: str) -> str:
    """Casefold, NFKC-normalise, and strip the accents of Latin letters ("Café" ->
    "cafe"). Marks on letters of other scripts are part of the letter and stay ("が" is
    not "か", "й" is not "и", the vowel signs of "नमस्ते" stay)."""
    if text.isascii():  # nothing to decompose or strip: casefold is lower for ASCII
        return text.lower()
    out: list[str] = []
    base_is_ascii = False
    for char in unicodedata.normalize("NFKD", text.casefold()):
        if not unicodedata.combining(char):
            base_is_ascii = char.isascii()
            out.append(char)
        elif not base_is_ascii:
            out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def words(text: str) -> list[str]:
    """The folded words of ``text`` (hyphens, underscores, punctuation split words; a
    combining mark belongs to the word of its letter)."""
    folded = fold(text)
    if folded.isascii():
        return _WORD_RE.findall(folded)
    return _slug_words(folded)


def name_key(name: str) -> str:
    """Exact-match key: folded words joined by single spaces."""
    return " ".join(words(name))


def _fold_plural(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def name_tokens(name: str) -> frozenset[str]:
    """Meaningful tokens of a name (stopwords and legal suffixes dropped, plurals folded).

    The articles "a"/"an" are dropped only as the first word: in "Series A" or "Vitamin A"
    the letter is what tells the name apart.
    """
    return tokens_of_words(words(name))


def tokens_of_words(parts: list[str]) -> frozenset[str]:
    """``name_tokens`` of a name already split by ``words`` (one fold for key and tokens)."""
    if parts and parts[0] in ("a", "an") and len(parts) > 1:
        parts = parts[1:]
    return frozenset(_fold_plural(w) for w in parts if w not in NAME_STOPWORDS)


def token_set_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / min(|a|, |b|); 0.0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


#: A slug's cap in UTF-8 bytes: with a date prefix (11), a ``-NN`` suffix and ``.md`` it
#: stays within the 200-byte note name of ``echo_core.write_scope``.
SLUG_MAX_BYTES = 150

#: Names Windows keeps for devices, with any extension ("con.md" cannot exist there);
#: the superscript digits count as digits there too (``COM¹``).
WINDOWS_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$",
     *(f"{port}{n}" for port in ("com", "lpt") for n in (*range(10), "¹", "²", "³"))]
)

#: Slugs a captured note may not take as they are, so they get ``-note``: the Windows
#: device names, and ``readme``: every kind folder has a README.md the recall index
#: leaves out as the folder's own, and a case-insensitive file system takes readme.md
#: for it ("README" -> "readme-note", recallable like any note).
RESERVED_SLUGS = WINDOWS_DEVICE_NAMES | {"readme"}


def _is_variation_selector(char: str) -> bool:
    return "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"


def _slug_words(title: str) -> list[str]:
    """Runs of letters, digits and combining marks (a mark belongs to the letter before
    it; a mark with no letter, or a variation selector of an emoji, is no word)."""
    out: list[str] = []
    current: list[str] = []
    for char in title:
        if _is_variation_selector(char):
            continue
        if char.isalnum() or (current and not char.isascii()
                              and unicodedata.category(char)[0] == "M"):
            current.append(char)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def _slug_word(word: str) -> str:
    """A word as a slug holds it: ``fold`` ("Café" -> "cafe", "Москва" -> "москва",
    "がぎ" stays "がぎ", half-width "ｶﾅ" -> "カナ")."""
    return fold(word)


def _cut_to_bytes(word: str, max_bytes: int) -> str:
    while len(word.encode("utf-8")) > max_bytes:
        word = word[:-1]
    return word


def slugify(title: str, max_len: int = 80) -> str:
    """Kebab-case slug of ``title`` ("Vantage Systems, Inc." -> "vantage-systems-inc").

    Letters of every script are kept (SPEC §1.4): Latin folds to ASCII, other scripts stay
    as written, lowercased. Punctuation, symbols and controls separate words, so a slug
    never holds a character a file name may not. The slug is cut deterministically at a
    word boundary to at most ``max_len`` characters and ``SLUG_MAX_BYTES`` UTF-8 bytes
    (a first word longer than that is cut inside). A reserved slug (``RESERVED_SLUGS``: a
    Windows device name, ``readme``) gets ``-note`` ("Con" -> "con-note").

    A title with no letter or digit (punctuation, symbols or emoji only) names nothing:
    ``EchoError`` (2) saying so, never a placeholder slug that a different title could
    meet later.
    """
    parts = [w for w in (_slug_word(word) for word in _slug_words(title)) if w]
    slug = ""
    for part in parts:
        candidate = f"{slug}-{part}" if slug else part
        if len(candidate) > max_len or len(candidate.encode("utf-8")) > SLUG_MAX_BYTES:
            if not slug:
                slug = _cut_to_bytes(candidate[:max_len], SLUG_MAX_BYTES)
            break
        slug = candidate
    if not slug:
        raise usage_error(f"title {title!r} has no letter or digit to name a note by; give "
                          "it at least one word (emoji and punctuation alone name nothing)")
    if slug in RESERVED_SLUGS:  # "con.md" cannot exist on Windows; README.md is the folder's
        slug = f"{slug}-note"
    return slug


def is_linkable_name(name: str) -> bool:
    """Whether ``name`` may be auto-linked: >= 4 characters and not only common words."""
    key = name_key(name)
    if len(key) < 4:
        return False
    return not all(w in COMMON_WORDS for w in key.split())
