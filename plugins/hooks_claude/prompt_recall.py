"""The UserPromptSubmit context: a small, budgeted recall for the prompt, or nothing.

A hit is injected only when it clears all three floors (SPEC §4.5 "only hits above a
score floor"):

* ``MIN_SCORE`` — absolute: BM25 x prior of at least 3.0;
* ``RELATIVE_FLOOR`` — at least 40 % of the best hit's score (drops the long tail);
* ``MIN_MATCHED_TERMS`` — the note contains at least 2 distinct query terms (plain or
  alias-expansion terms, an expansion phrase counting once when the note holds all its
  words; 1 when the prompt has a single term).

Calibration (``bench/eval_gold.py`` vault: 34 captured notes plus 5 session logs and
journals; scores at ``recall`` limit 5): relevant top hits score 6.2-15.7 with 2-4 matched
terms; unrelated coding prompts ("fix the failing unit test in parser.py", "make the button
blue", "why does the build fail on windows") reach 4.25 but always on one shared word, and
the rare two-word accidents stay under 2.4. With these floors 14 of the 15 gold queries
inject a relevant note and 0 of 14 unrelated prompts inject anything; the miss is a
one-rare-word query ("OpenStreetMap attribution requirements", 4.03 on one term) that no
score threshold separates from the one-word accidents. Precision wins: this runs on every
prompt, and the agent can always recall explicitly.

The context is at most ``CONTEXT_BUDGET`` (1500) characters, header included; the hit that
does not fit whole is cut (marked …) when at least ``MIN_PIECE`` characters remain.
"""

from __future__ import annotations

from typing import Any

CONTEXT_BUDGET = 1500
MIN_SCORE = 3.0
RELATIVE_FLOOR = 0.4
MIN_MATCHED_TERMS = 2
RECALL_LIMIT = 5
#: Only the start of a very long prompt (a pasted log) is searched.
QUERY_MAX_CHARS = 1000
MIN_PIECE = 80

HEADER = ("echo-memory: notes from persistent memory that may be relevant to this prompt "
          "(read one with `echo-memory get PATH`; search with `echo-memory recall`):")


def wants_recall(prompt: Any) -> bool:
    """False for prompts memory should not answer: empty, or a slash command."""
    return isinstance(prompt, str) and bool(prompt.strip()) and not prompt.lstrip().startswith("/")


def _matched_terms(tokenizer: Any, text: str, terms: set[str]) -> int:
    """How many of ``terms`` ``text`` holds (a phrase, words joined by spaces: all of
    them)."""
    tokens = set(tokenizer.tokenize(text))
    return sum(1 for term in terms if tokens.issuperset(term.split()))


def relevant_hits(ctx: Any, prompt: str) -> list[Any]:
    """Recall hits for ``prompt`` that clear every floor (module docstring), best first."""
    from echo_core import invoke

    envelope = invoke(ctx, "recall", {"query": prompt[:QUERY_MAX_CHARS], "limit": RECALL_LIMIT,
                                      "include_linked": False})
    data = envelope.data
    hits = list(data.primary) if envelope.ok else []
    if not hits:
        return []
    plain = set(data.terms)
    terms = plain | set(data.expansions)
    needed = min(MIN_MATCHED_TERMS, len(plain))
    floor = max(MIN_SCORE, RELATIVE_FLOOR * max(h.score for h in hits))
    strong = [h for h in hits if h.score >= floor]
    texts = ctx.vault.storage.read_many([h.path for h in strong])
    return [h for h in strong
            if _matched_terms(ctx.tokenizer, texts.get(h.path) or "", terms) >= needed]


def _line(hit: Any) -> str:
    facts = ", ".join(x for x in (hit.type, hit.updated) if x)
    label = f"- {hit.path}" + (f" [{facts}]" if facts else "")
    return f"{label}: {hit.excerpt}" if hit.excerpt else label


def render_context(hits: list[Any], budget: int = CONTEXT_BUDGET) -> str | None:
    """The header plus one line per hit, at most ``budget`` characters; None without hits."""
    if not hits:
        return None
    out = HEADER
    for hit in hits:
        line = _line(hit)
        room = budget - len(out) - 1
        if len(line) <= room:
            out = f"{out}\n{line}"
            continue
        if room >= MIN_PIECE:
            out = f"{out}\n{line[: room - 1].rstrip()}…"
        break
    return out if out != HEADER else None


def prompt_context(ctx: Any, prompt: str) -> str | None:
    """The additionalContext for ``prompt``, or None when memory has nothing relevant."""
    return render_context(relevant_hits(ctx, prompt))
