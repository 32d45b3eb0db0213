"""``eval``: recall quality measured on the user's own vault (queries from titles, aliases,
headings and distinctive sentences, the source note as the answer), its trend across runs
in the state dir, and that a run reads the vault only."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.perf_eval import write_eval_vault
from echo_core.models import Envelope
from echo_core.ops.hit_counts import HITS_FILE
from echo_core.ops.recall_index import rebuild_index
from echo_core.ops.self_eval import EvalResult, figures, self_eval
from echo_core.ops.self_eval_history import history_path, read_records
from echo_core.ops.self_eval_queries import distinctive_words, generate_queries, sample_order
from echo_core.verbs.eval_verbs import render_eval
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client

NOW = "2026-03-01T09:30:00"
LATER = "2026-03-08T09:30:00"

ADA = ("Ada wrote the first published program for the analytical engine of Babbage.\n\n"
       "## Bernoulli numbers\n\n"
       "Her note G computed the Bernoulli numbers with nested loops on punched cards.")
BABBAGE = ("Babbage designed the difference engine and the analytical engine, mechanical "
           "computers turned by a crank.\n\n## Difference engine\n\n"
           "A calculator for polynomial tables working by finite differences.")
PRICING = ("We decided to charge per seat instead of per workspace because procurement "
           "teams prefer predictable invoices every quarter.")


def small_box(tmp_path: Path) -> VaultBox:
    """Three notes worth asking about (two aliases, two headings of their own), one too
    short to ask about, and init's own notes (``_agent/``, the daily note)."""
    box = VaultBox(tmp_path).init()
    for title, kind, body, aliases in (
            ("Ada Lovelace", "person", ADA, ["Countess of Lovelace"]),
            ("Charles Babbage", "person", BABBAGE, []),
            ("Vantage pricing", "decision", PRICING, ["Seat pricing"]),
            ("Tiny note", "concept", "Short.", [])):
        assert box.capture(title, kind=kind, body=body, aliases=aliases).ok
    return box


def run(box: VaultBox, now: str = NOW, *, queries: int = 200,
        save: bool = True) -> Envelope[EvalResult]:
    """One ``eval`` run at ``now``."""
    envelope = self_eval(box.ctx(ECHO_NOW=now), queries=queries, save=save)
    assert envelope.ok, envelope
    return envelope


def test_queries_of_each_kind_come_from_the_notes_worth_asking(tmp_path: Path) -> None:
    box = small_box(tmp_path)
    ctx = box.ctx()
    found = generate_queries(ctx.vault.storage, ctx.tokenizer, 200)
    by_kind = Counter(q.kind for q in found.queries)
    assert by_kind == {"title": 3, "alias": 2, "heading": 2, "sentence": 3}
    assert found.notes == 3
    answers = {q.answer for q in found.queries}
    assert answers == {"resources/people/ada-lovelace.md", "resources/people/charles-babbage.md",
                       "decisions/2026-03-01-vantage-pricing.md"}, answers
    pairs = {(q.kind, q.text) for q in found.queries}
    assert {("title", "Ada Lovelace"), ("alias", "Countess of Lovelace"),
            ("heading", "Bernoulli numbers"), ("heading", "Difference engine")} <= pairs
    # the template's headings (Notes, Related) are never asked; _agent/ never sampled
    assert not {t for k, t in pairs if k == "heading"} & {"Notes", "Related"}
    assert not any(q.answer.startswith("_agent/") for q in found.queries)
    # the same vault, the same queries
    assert generate_queries(ctx.vault.storage, ctx.tokenizer, 200) == found
    assert len(generate_queries(ctx.vault.storage, ctx.tokenizer, 4).queries) == 4


def test_a_run_reports_shares_per_kind_and_a_title_finds_its_note(tmp_path: Path) -> None:
    envelope = run(small_box(tmp_path))
    data = envelope.data
    assert data.queries == 10 and data.notes == 3
    assert {k.kind: k.queries for k in data.kinds} == {"title": 3, "alias": 2, "heading": 2,
                                                       "sentence": 3}
    for value in (data.r5, data.r10, data.mrr, *(v for k in data.kinds
                                                  for v in (k.r5, k.r10, k.mrr))):
        assert 0.0 <= value <= 1.0
    title = next(k for k in data.kinds if k.kind == "title")
    assert title.r5 == 1.0
    assert data.ranker == "bm25" and data.tokenizer == "porterlite"
    assert data.previous is None and data.change is None and data.saved
    assert envelope.message.startswith(f"R@5 {data.r5:.2f}, MRR {data.mrr:.2f} on 10 queries")
    text = render_eval(envelope)
    assert "title" in text and "trend: first run" in text


def test_figures_are_recall_at_5_and_10_and_mrr_at_10() -> None:
    got = figures("all", [1, 2, 6, None])
    assert (got.queries, got.r5, got.r10) == (4, 0.5, 0.75)
    assert got.mrr == round((1 + 1 / 2 + 1 / 6) / 4, 4)
    assert figures("none", []).r5 == 0.0


def test_distinctive_words_are_the_rarest_of_the_rarest_sentence_in_order(
        tmp_path: Path) -> None:
    tokenizer = VaultBox(tmp_path).ctx().tokenizer
    counts = {"common": 50, "everyday": 40, "ordinary": 30, "plain": 20, "usual": 25,
              "things": 60, "saw": 30, "eating": 12, "near": 40, "zeppelin": 1, "quasar": 1,
              "walrus": 2, "marzipan": 1, "tundra": 3, "falcon": 2, "glacier": 9, "ada": 1}
    df = Counter({tokenizer.tokenize(word)[0]: n for word, n in counts.items()})
    body = ("Common everyday ordinary plain usual things.\n\n"
            "Ada saw a zeppelin, a quasar and a walrus eating marzipan on the tundra near "
            "the falcon and glacier.")
    words = distinctive_words(body, tokenizer, df, set(tokenizer.tokenize("Ada")))
    assert words == "zeppelin quasar walrus marzipan tundra falcon"
    assert distinctive_words("Too few words.", tokenizer, df, set()) == ""


def test_sample_order_is_stable_and_not_alphabetical() -> None:
    paths = [f"resources/people/p{i}.md" for i in range(50)]
    order = sample_order(paths)
    assert order == sample_order(reversed(paths)) and sorted(order) == sorted(paths)
    assert order != sorted(paths)
    # a new note takes one place; the others keep their order
    assert [p for p in sample_order([*paths, "resources/people/new.md"])
            if p != "resources/people/new.md"] == order


def test_a_second_run_shows_the_previous_figures_and_the_changes(tmp_path: Path) -> None:
    box = small_box(tmp_path)
    first = run(box).data
    # a change to the vault: a note whose title also fills another note's body
    assert box.capture("Analytical engine", kind="concept",
                       body="The analytical engine by Babbage; Ada Lovelace programmed it "
                            "with Bernoulli numbers, the Countess of Lovelace wrote note G.").ok
    second = run(box, LATER)
    data = second.data
    assert data.previous is not None and data.previous.at == NOW
    assert (data.previous.r5, data.previous.mrr) == (first.r5, first.mrr)
    assert data.change is not None and data.change.r5 == round(data.r5 - first.r5, 4)
    assert data.change.mrr == round(data.mrr - first.mrr, 4)
    assert data.runs_before == 1 and "notes 6 -> 7" in data.changed
    assert "since 2026-03-01" in second.message
    text = render_eval(second)
    assert "trend: R@5" in text and "1 earlier run" in text
    records = read_records(box.ctx().state_dir)
    assert [r.at for r in records] == [NOW, LATER]
    assert [k.kind for k in records[-1].kinds] == ["title", "alias", "heading", "sentence"]


def test_no_save_leaves_the_history_as_it_was(tmp_path: Path) -> None:
    box = small_box(tmp_path)
    run(box)
    path = history_path(box.ctx().state_dir)
    before = path.read_bytes()
    data = run(box, LATER, save=False).data
    assert not data.saved and data.previous is not None
    assert path.read_bytes() == before


def test_a_garbage_line_in_the_history_is_skipped(tmp_path: Path) -> None:
    box = small_box(tmp_path)
    run(box)
    path = history_path(box.ctx().state_dir)
    with path.open("ab") as fh:
        fh.write(b"not json at all\n[1, 2]\n{\"at\": \"x\", \"r5\": 7}\n\xff\xfe\n")
        fh.write(b'{"at": "2026-03-05T00:00:00", "r5": 0.5')  # torn: no end, no newline
    data = run(box, LATER).data
    assert data.previous is not None and data.previous.at == NOW and data.runs_before == 1
    assert [r.at for r in read_records(box.ctx().state_dir)] == [NOW, LATER]


def test_a_run_leaves_the_vault_untouched_and_counts_no_hits(tmp_path: Path) -> None:
    box = small_box(tmp_path)
    digest = box.tree_digest()
    run(box)
    run(box, LATER)
    assert box.tree_digest() == digest
    assert not (box.ctx().state_dir / HITS_FILE).exists()


def test_a_thousand_note_vault_reports_figures(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    ctx = box.ctx()
    write_eval_vault(ctx, box.vault, 1000)
    rebuild_index(box.ctx())
    start = time.perf_counter()
    envelope = run(box)
    seconds = time.perf_counter() - start
    data = envelope.data
    assert data.queries == 200 and data.corpus >= 1000
    assert {k.kind for k in data.kinds} == {"title", "alias", "heading", "sentence"}
    assert 0.5 <= data.r5 <= 1.0 and 0.0 < data.mrr <= data.r10
    assert len(data.misses) == 5 and all(m.rank != 1 for m in data.misses)
    assert seconds < 30.0


def test_cli_eval_json_then_the_trend_in_prose(tmp_path: Path, isolated_env: dict[str, str],
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    box = small_box(tmp_path)
    digest = box.tree_digest()
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    first = run_main(["eval", *base, "--json"], capsys, monkeypatch)
    assert first.code == 0, first.err
    data = json.loads(first.out)
    assert data["ok"] and data["queries"] == 10 and data["previous"] is None
    assert {k["kind"]: k["queries"] for k in data["kinds"]}["heading"] == 2
    dry = run_main(["eval", *base, "--queries", "4", "--no-save", "--json"], capsys, monkeypatch)
    assert dry.code == 0 and json.loads(dry.out)["queries"] == 4
    assert not json.loads(dry.out)["saved"]
    prose = run_main(["eval", *base], capsys, monkeypatch)
    assert prose.code == 0, prose.err
    assert "since 2026-03-01" in prose.out and "1 earlier run" in prose.out
    assert "queries 10 -> 4" not in prose.out  # the unsaved run is not the previous one
    assert "worst misses:" in prose.out or "R@5 1.00" in prose.out
    assert box.tree_digest() == digest


def test_mcp_echo_eval_answers_within_its_output_schema(tmp_path: Path) -> None:
    box = small_box(tmp_path)

    async def body(client: Any) -> None:
        failed, data, text = await call(client, "echo_eval", queries=5, save=False)
        assert not failed and data["queries"] == 5 and not data["saved"]
        assert text.startswith("R@5 ")

    with_client(make_server(box), body)
    assert not history_path(box.ctx().state_dir).exists()
