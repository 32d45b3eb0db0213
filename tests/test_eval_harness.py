"""The recall eval harness: metrics, the LoCoMo loader (on a tiny synthetic conversation,
never the shared data) and a smoke run of the gold set."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.eval_metrics import (
    first_rank,
    mean_metrics,
    ndcg_at_k,
    recall_all_at_k,
    recall_at_k,
    reciprocal_rank,
    score_query,
    summarise,
)

# --- metrics ----------------------------------------------------------------------------------


def test_recall_at_k_counts_the_share_of_relevant_found() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert recall_at_k(ranked, {"a", "f"}, 5) == 0.5
    assert recall_at_k(ranked, {"a", "f"}, 6) == 1.0
    assert recall_at_k(ranked, {"z"}, 5) == 0.0
    assert recall_at_k(ranked, set(), 5) == 0.0


def test_recall_all_needs_every_relevant_id() -> None:
    assert recall_all_at_k(["a", "b", "c"], {"a", "c"}, 3) == 1.0
    assert recall_all_at_k(["a", "b", "c"], {"a", "c"}, 2) == 0.0


def test_duplicates_count_once_at_their_first_position() -> None:
    assert recall_at_k(["a", "a", "a", "b"], {"b"}, 2) == 1.0
    assert reciprocal_rank(["x", "x", "b"], {"b"}) == 0.5


def test_ndcg_is_one_for_a_perfect_ranking_and_discounts_lower_ranks() -> None:
    assert ndcg_at_k(["a", "b", "c"], {"a", "b"}, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["x", "y", "z", "a"], {"a"}, 3) == 0.0
    # two relevant, one found at rank 1: DCG 1 over IDCG 1 + 1/log2(3)
    assert ndcg_at_k(["a", "x"], {"a", "b"}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_mrr_and_first_rank() -> None:
    assert reciprocal_rank(["x", "y", "a"], {"a", "b"}) == pytest.approx(1 / 3)
    assert first_rank(["x", "y", "a"], {"a"}) == 3
    assert first_rank(["x"], {"a"}) is None
    assert reciprocal_rank([], {"a"}) == 0.0


def test_score_query_and_summaries() -> None:
    row = score_query(["a", "x", "b"], {"a", "b"}, ks=(1, 5))
    assert row == {"R@1": 0.5, "all@1": 0.0, "R@5": 1.0, "all@5": 1.0,
                   "NDCG@10": pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3))), "MRR": 1.0}
    summary = summarise([("1", {"R@5": 1.0}), ("2", {"R@5": 0.0}), ("2", {"R@5": 0.5})])
    assert summary["overall"] == {"R@5": pytest.approx(0.5), "n": 3}
    assert summary["2"] == {"R@5": 0.25, "n": 2}
    assert mean_metrics([]) == {"n": 0}


# --- the LoCoMo loader -----------------------------------------------------------------------


def _synthetic_conversation(folder: Path) -> Path:
    """Two short sessions and questions with every kind of malformed evidence id."""
    turn = lambda s, i, who, text, **kw: {"speaker": who, "dia_id": f"D{s}:{i}", "text": text, **kw}
    data = {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [turn(1, 1, "Ana", "I adopted a grey kitten named Pixel."),
                      turn(1, 2, "Ben", "Lovely! Here is my garden.",
                           blip_caption="a photo of tomatoes on a vine", img_url=["x"]),
                      turn(1, 3, "Ana", "Your tomatoes look delicious.")],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [turn(2, 1, "Ben", "I ran a marathon in Lisbon last weekend."),
                      turn(2, 2, "Ana", "Congratulations on the marathon!")],
        "session_3_date_time": "9:00 am on 1 July, 2023",  # a date with no turns
        "qa": [
            {"question": "What is the name of Ana's kitten?", "answer": "Pixel",
             "evidence": ["D1:1"], "category": 4},
            {"question": "What does Ben grow and where did he run?", "answer": "x",
             "evidence": ["D1:2; D2:1"], "category": 1},
            {"question": "When did Ben run a marathon?", "answer": "x",
             "evidence": ["D:2:1", "D02:01"], "category": 2},
            {"question": "Broken ids", "answer": "x", "evidence": ["D", "D9:9"], "category": 3},
            {"question": "Adversarial", "adversarial_answer": "x", "evidence": [], "category": 5},
        ],
    }
    path = folder / "conv-demo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_loader_normalises_evidence_ids_and_counts_the_rest(tmp_path: Path) -> None:
    from bench.eval_locomo import load_conversation, scorable

    conv = load_conversation(_synthetic_conversation(tmp_path))
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conv.turns[1].caption == "a photo of tomatoes on a vine"
    assert conv.turns[3].day == "20 June 2023"
    evidence = {q.question: q.evidence for q in conv.qas}
    assert evidence["What does Ben grow and where did he run?"] == ("D1:2", "D2:1")
    assert evidence["When did Ben run a marathon?"] == ("D2:1",)
    assert evidence["Broken ids"] == ()
    assert conv.issues == {"split": 1, "reformatted": 2, "unparseable": 1, "unknown": 1,
                           "qa_without_evidence": 1}
    assert [q.category for q in scorable(conv)] == [4, 1, 2]


def test_loader_never_crashes_on_a_broken_file(tmp_path: Path) -> None:
    from bench.eval_locomo import load_dir

    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    _synthetic_conversation(tmp_path)
    convs, errors = load_dir(tmp_path)
    assert [c.name for c in convs] == ["conv-demo"]
    assert len(errors) == 1 and errors[0].startswith("bad.json")


def test_notes_hold_speaker_date_text_caption_and_optional_context(tmp_path: Path) -> None:
    from bench.eval_locomo import LAYOUTS, load_conversation, note_path, note_text

    conv = load_conversation(_synthetic_conversation(tmp_path))
    plain = note_text(conv.turns, 1, LAYOUTS["turn"])
    assert "# Ben — 8 May 2023" in plain
    assert "Here is my garden. [shares a photo: a photo of tomatoes on a vine]" in plain
    assert "kitten" not in plain
    with_context = note_text(conv.turns, 1, LAYOUTS["turn+context"])
    assert "- Ana: I adopted a grey kitten named Pixel." in with_context
    assert "marathon" not in with_context  # neighbours come from the same session only
    assert note_path(conv.turns[3]) == "conversation/session-02/D2-1.md"


# --- smoke runs (real recall stack, no shared data) -------------------------------------------


def _ranker_extra() -> tuple[tuple[str, object], ...]:
    from bench.eval_recall import ranker_plugins

    return ranker_plugins()  # the bm25 ranker ships with the package: no skip


def test_gold_set_smoke_run_full_recall_is_perfect_and_ablations_lose(tmp_path: Path) -> None:
    from bench.eval_gold import QUERIES, run_gold

    result = run_gold(tmp_path, extra_plugins=_ranker_extra())
    assert len(QUERIES) >= 14 and result["notes"] >= 38
    variants = result["variants"]
    assert variants["full"]["summary"]["R@5"] == 1.0
    assert variants["full"]["summary"]["MRR"] == 1.0
    for name in ("no-expansion", "no-stemming"):
        lost = variants[name]["missed"] + variants[name]["demoted"]
        assert lost, f"{name} lost no query: the gold set does not show what the plugin adds"


def test_locomo_smoke_run_on_a_synthetic_conversation(tmp_path: Path) -> None:
    from bench.eval_gold import Box
    from bench.eval_locomo import LAYOUTS, load_conversation, run_conversation

    conv = load_conversation(_synthetic_conversation(tmp_path))
    box = Box(tmp_path / "run", extra=_ranker_extra())
    run = run_conversation(conv, box, LAYOUTS["turn"], limit=10, baselines=())
    assert run["notes"] == 5
    assert run["ranked"]["ours"][0][0] == "D1:1"  # "kitten" finds Ana's turn first


def test_the_paired_permutation_test_tells_a_real_difference_from_noise() -> None:
    from bench.eval_metrics import paired_permutation_p

    same = [0.0, 1.0, 0.5, 1.0] * 10
    assert paired_permutation_p(same, same) == 1.0
    better = [1.0] * 30 + [0.0] * 10
    worse = [0.0] * 30 + [0.0] * 10
    p = paired_permutation_p(better, worse, rounds=2000)
    assert p < 0.01 and p == paired_permutation_p(worse, better, rounds=2000)  # two-sided
    noise = [1.0, 0.0] * 20
    flipped = [0.0, 1.0] * 20  # as many wins as losses: no evidence either way
    assert paired_permutation_p(noise, flipped, rounds=2000) > 0.5
    assert paired_permutation_p(better, worse, rounds=500, seed=3) == paired_permutation_p(
        better, worse, rounds=500, seed=3)
    with pytest.raises(ValueError):
        paired_permutation_p([1.0], [1.0, 0.0])
