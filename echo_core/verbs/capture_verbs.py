"""``capture``, declared once (SPEC §2.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.actions import Action
from echo_core.models import CaptureRequest, Envelope
from echo_core.operations import (
    Access,
    Bounds,
    CliArg,
    CliParam,
    CliSurface,
    Operation,
    SkillSpec,
    param,
)
from echo_core.text_source import read_text_source

MAX_NAMES = 50
MAX_BODY = 100_000  # over MCP; the CLI (stdin, files) takes up to CLI_MAX_BODY
CLI_MAX_BODY = 10_000_000


def _kinds() -> str:
    """The kinds of the routing manifest (read when a surface shows the help)."""
    from echo_core.routing import load_manifest

    return ", ".join(load_manifest().kinds)


def _domains() -> str:
    from echo_core.routing import load_manifest

    return ", ".join(load_manifest().area_domains)


def _names(help: str) -> Any:
    return param((), help=help, max_length=MAX_NAMES, cli=CliParam(split_commas=True,
                                                                   metavar="A,B"))


@attrs.frozen(kw_only=True)
class CaptureParams:
    """What ``capture`` takes (``echo_core.models.CaptureRequest`` is built from it)."""

    title: str = param(help="The thing's name (one line), e.g. 'Ada Lovelace' or 'Use "
                       "pytest, not unittest'.", min_length=1, max_length=200,
                       cli=CliParam(positional=True))
    kind: str | None = param(None, help=lambda: f"Kind of note: one of {_kinds()}. Omit to "
                             "drop a quick item in the inbox.",
                             cli=CliParam(short="-k", metavar="KIND"))
    body: str = param("", help="Markdown text to record (on the CLI, - as the second "
                      "argument or as TEXT reads it from stdin).", max_length=MAX_BODY,
                      cli=CliParam(short="-b", metavar="TEXT",
                                   bounds=Bounds(max_length=CLI_MAX_BODY)))
    tags: tuple[str, ...] = _names("Tags (repeat the option or comma-separate).")
    aliases: tuple[str, ...] = _names("Other names it goes by.")
    sources: tuple[str, ...] = _names("Where it came from (URLs, paths).")
    status: str | None = param(None, help="One word, e.g. active (default: by kind).",
                               cli=CliParam(metavar="STATUS"))
    date: str | None = param(None, help="ISO date YYYY-MM-DD of the event (default today).",
                             cli=CliParam(metavar="YYYY-MM-DD"))
    domain: str | None = param(None, help=lambda: f"For kind area: one of {_domains()}.",
                               cli=CliParam(metavar="DOMAIN"))
    merge_into: str | None = param(None, help="Slug of the existing note to update (the "
                                   "answer to a duplicate-gate).", cli=CliParam(metavar="SLUG"))
    force: bool = param(False, help="Create even if a gate objects (a near-duplicate name, "
                        "or a line contradicting a known preference).")
    dry_run: bool = param(False, help="Preview only; nothing is written.")
    supersedes: str | None = param(
        None, help="What this capture replaces: the slug of an older note (it is marked "
        "superseded and linked both ways), or for kind semantic a line of the operator "
        "preferences in quotes (struck through, the new line added after).",
        max_length=500, cli=CliParam(metavar="SLUG|LINE"))
    ttl_days: int | None = param(None, help="Working memory: expire this many days from "
                                 "today (default ECHO_WORKING_TTL_DAYS, 14).", ge=1, le=3650,
                                 cli=CliParam(flag="--ttl", metavar="DAYS"))
    expires: str | None = param(None, help="Working memory: the ISO date it expires "
                                "(instead of --ttl).", cli=CliParam(metavar="YYYY-MM-DD"))
    # the operator's override only: over MCP a model cannot turn redaction off
    redact: bool = param(True, help="Replace secrets with [REDACTED:<rule>] and drop "
                         "<private> text before writing (SPEC §2.1).", mcp=None,
                         cli=CliParam(flag="--no-redact", negate=True, help="Write the "
                                      "text as given, secrets included (logged)."))

    def request(self) -> CaptureRequest:
        """The ``CaptureRequest`` these parameters ask for."""
        return CaptureRequest(**attrs.asdict(self, recurse=False))


def _body_from_stdin(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """The CLI's ``capture TITLE -`` (or ``--body -``): the body comes from stdin. Any
    other second word is refused (exit 2), most often the rest of a title left unquoted
    (``capture Alan Kay``): the message shows the title quoted."""
    from echo_core.errors import usage_error

    out = dict(values)
    words = out.pop("body_source", None) or ()
    words = (words,) if isinstance(words, str) else tuple(words)
    source = words[0] if words == ("-",) else None
    if words and source is None:
        extra = " ".join(words)
        quoted = f'"{" ".join([out.get("title", ""), *words])}"'
        raise usage_error(f"unexpected argument{'s' if len(words) > 1 else ''} {extra!r}: "
                          f"quote a title of several words (capture {quoted}); give the "
                          "body with --body TEXT, or - to read it from stdin")
    if source == "-":
        if "body" in out:
            raise usage_error("body: give either --body or - (stdin), not both")
        out["body"] = read_text_source("-", "body (stdin)")
    elif out.get("body") == "-":  # ``--body -`` / ``-b -`` reads stdin too, as ``-`` does
        out["body"] = read_text_source("-", "body (stdin)")
    return out


def render_capture(env: Envelope[Any]) -> str:
    """The outcome line, gate candidates, links and aliases learned, similar notes."""
    data = env.data
    lines = [env.message]
    if env.action in (Action.DUPLICATE_GATE, Action.DRY_RUN_DUPLICATE_GATE):
        lines.append("candidates:")
        lines += [f"  {c['slug']}  {c['path']}  (score {c['score']})" for c in data.candidates]
    if env.action in (Action.CONTRADICTION, Action.DRY_RUN_CONTRADICTION):
        lines.append("contradicts:")
        lines += [f"  {c['path']}: {c['line']}  (--supersedes {c['supersedes']!r})"
                  for c in data.contradictions]
    for path in getattr(data, "links_added", ()):
        lines.append(f"  linked {path}")
    for alias in getattr(data, "aliases_learned", ()):
        lines.append(f"  learned alias {alias!r}")
    near = getattr(data, "near_duplicates", ())
    if near and env.action != Action.DUPLICATE_GATE:
        names = ", ".join(f"{c['title']} ({c['kind']})" for c in near)
        lines.append(f"  similar: {names}")
    return "\n".join(lines)


def run_capture(ctx: Any, p: CaptureParams) -> Envelope[Any]:
    """``echo_core.ops.capture.capture`` of the request."""
    from echo_core.ops.capture import capture

    return capture(ctx, p.request())


def capture_access(p: CaptureParams) -> Access:
    """A write, unless it is a dry run."""
    return "read" if p.dry_run else "write"


def _capture_result() -> type:
    from echo_core.ops.capture import CaptureResult

    return CaptureResult


SAVE_SKILL = SkillSpec("save", (
    "Save something worth remembering to echo-memory (a person, company, project update, "
    "decision, concept, or an operator preference). Use when the user says remember/note "
    "this, when a decision is made, or when you learn a durable fact a future session "
    "will need."), """
# Save to memory

Save: $ARGUMENTS

One note per thing: the title names it, `--kind` routes it, `--body` says what to keep.
An existing note with the same name (or alias) gets a dated bullet instead of a copy.

```bash
echo-memory capture "Ada Lovelace" --kind person --body "Maintains the billing service; prefers short PRs."
echo-memory capture "Vantage Systems" --kind company --body "Renewal due in April at 40k/year."
echo-memory capture "Move to Postgres 16" --kind decision --date 2026-03-01 --body "Chosen for ...; rejected ..."
echo-memory capture "Run tests with pytest -n 2" --kind semantic --body "The operator wants the parallel run."
echo-memory capture "look into flaky deploy test"          # no --kind: goes to the inbox
```

Kinds: person, company, concept, reference, project, area (needs `--domain business|
personal|learning|systems`), meeting, decision, semantic (facts and preferences), episodic
(what happened), working (short-lived, expires), skill. Add `--tags a,b`,
`--aliases "VSYS,Vantage"`, `--sources URL`; `--dry-run` previews without writing.

If capture stops at the duplicate gate (exit 76), it lists near-identical notes: re-run
with `--merge-into SLUG` to update that one, or `--force` if it really is new.
`echo-memory resolve "Vantage"` shows which note a name already points to. Keep bodies
factual and short; never store secrets.
""", argument_hint="[what to remember]")

CAPTURE = Operation(
    "capture",
    "Remember TITLE: create or update the entity it names, or add it to the inbox.",
    ("Save something worth remembering across sessions (a person, project, decision, "
     "preference, idea...) as a note, updating the existing note when the title resolves "
     "to one; without kind it goes to the inbox. Use it when a durable fact or decision "
     "comes up. Returns the path and action; a likely duplicate returns ok=false with "
     "action duplicate-gate and candidates (retry with merge_into or force)."),
    CaptureParams, run_capture, _capture_result, access=capture_access, profile="core",
    render=render_capture, skill=SAVE_SKILL,
    cli=CliSurface(
        extra=(CliArg("body_source", "- reads the body from stdin.", metavar="[-]",
                      required=False, variadic=True),),
        prepare=_body_from_stdin, literal_args=True,
        help="""Remember TITLE: create or update the entity it names, or add it to the inbox.

\b
Examples:
  echo-memory capture "Ada Lovelace" -k person -b "Wrote the first program."
  echo-memory capture "Vantage Systems" -k company - < notes.txt
  echo-memory capture "call the bank"         # no --kind: goes to the inbox

Without --kind the capture is one inbox line: the title, then the body's lines joined
with " / ". An existing entity (same name, alias or slug) gets a dated bullet with the whole body
(none when the note holds that text already: a retried capture adds nothing).
A new name too close to an existing one of the same kind (the same words, or a name
misspelt by a letter) stops at the duplicate gate (exit 76): re-run with --merge-into
SLUG to update it, or --force to create anyway."""),
    fresh="quick",
)
