"""A deterministic table of multilingual titles for the names acceptance test (issue 13):
Latin with accents, CJK, Cyrillic, Arabic, Greek, Devanagari, Hangul, emoji and
punctuation, each title with at least one word and no two titles with the same name
(``name_key``: titles that differ only in case, Latin accents, punctuation or emoji are
one name by design). Not a test module."""

from __future__ import annotations

import random

from echo_core.names import name_key

WORDS = {
    "latin": ["Café", "Müller", "Ærø", "Straße", "Łódź", "São", "Paulo", "Crème", "brûlée",
              "Niño", "Ångström", "Dvořák", "Zürich", "façade", "Señor", "Göteborg", "Øresund",
              "Tiếng", "Việt", "Çağrı", "Ada", "Grace", "Vantage", "Systems", "Plan", "Budget"],
    "cjk": ["日本語", "タイトル", "東京", "会議", "かき", "がぎ", "北京", "大学", "ラーメン",
            "漢字", "中文", "标题", "カタカナ", "ひらがな", "研究", "計画"],
    "cyrillic": ["Привет", "мир", "Москва", "встреча", "мой", "мои", "ёлка", "елка",
                 "Київ", "Беларусь", "Сербия", "план", "отчёт", "книга"],
    "arabic": ["مرحبا", "بالعالم", "القاهرة", "كتاب", "مدرسة", "خطة", "اجتماع", "سلام"],
    "greek": ["Ωμέγα", "Αθήνα", "Καλημέρα", "κόσμος", "Θεσσαλονίκη", "σχέδιο", "λόγος"],
    "devanagari": ["नमस्ते", "दुनिया", "भारत", "योजना", "किताब"],
    "hangul": ["한국어", "서울", "회의", "계획", "책"],
}
DECORATIONS = ["🎉", "🚀", "❤️", "👩‍💻", "✨"]
SEPARATORS = [" ", " ", " ", " — ", ", ", ": ", " / ", " & ", " | ", " # ", " [", "] ",
              " ? ", ' "', " * ", " < ", " > ", " \\ ", " ^ ", " . "]


def _title(rng: random.Random) -> str:
    script = rng.choice(sorted(WORDS))
    pool = WORDS[script] + (WORDS["latin"] if rng.random() < 0.2 else [])
    parts = [rng.choice(pool) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.5:
        parts.append(str(rng.randint(1, 999)))
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(SEPARATORS) + part
    if rng.random() < 0.2:
        text = f"{rng.choice(DECORATIONS)} {text}"
    if rng.random() < 0.2:
        text += rng.choice(["!", "?", "...", " ✨", "."])
    if rng.random() < 0.1:
        text = f".{text}"  # a leading dot must not make a hidden file
    return text.strip()


def multilingual_titles(count: int, seed: int = 13) -> list[str]:
    """``count`` titles, each a distinct name, the same list for the same ``seed``."""
    rng = random.Random(seed)
    titles: list[str] = []
    keys: set[str] = set()
    while len(titles) < count:
        title = _title(rng)
        key = name_key(title)
        if key and key not in keys:
            keys.add(key)
            titles.append(title)
    return titles
