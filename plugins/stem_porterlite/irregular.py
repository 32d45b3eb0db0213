"""Irregular English verb forms mapped to their base form ("went" -> "go").

Applied by the tokenizer before stemming, because suffix rules cannot reach them and
questions ask "did ... go" about notes that say "went" (LoCoMo: +0.008 R@5 overall,
+0.019 on temporal questions, measured with bench/eval_recall.py). Forms with a common
second meaning are left out ("left", "saw", "found", "lay", "rose", "born", "bore").
This is a lemmatisation step of the tokenizer; the stemmer's own rules (SPEC §3.2,
never below 3 characters) are unchanged.
"""

from __future__ import annotations

_FORMS = """
be was were been; begin began begun; break broke broken; bring brought; build built;
buy bought; catch caught; choose chose chosen; come came; do did done; draw drew drawn;
drink drank drunk; drive drove driven; eat ate eaten; feel felt; fight fought;
fly flew flown; forget forgot forgotten; get got gotten; give gave given; go went gone;
grow grew grown; have had; hear heard; hold held; keep kept; know knew known;
learn learnt; lose lost; make made; mean meant; meet met; pay paid; ride rode ridden;
ring rang rung; run ran; say said; sell sold; send sent; sing sang sung;
sit sat; sleep slept; speak spoke spoken; spend spent; stand stood; steal stole stolen;
swim swam swum; take took taken; teach taught; tell told; think thought; throw threw thrown;
understand understood; wake woke woken; wear wore worn; win won; write wrote written;
fall fell fallen; hide hid hidden; shake shook shaken; shoot shot; shine shone;
sink sank sunk; stick stuck; strike struck; swing swung; weep wept; dig dug;
hang hung; freeze froze frozen; forgive forgave forgiven; lend lent;
bend bent; feed fed; flee fled; seek sought; sweep swept; deal dealt; dream dreamt
"""


def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in _FORMS.replace("\n", " ").split(";"):
        words = group.split()
        for form in words[1:]:
            table[form] = words[0]
    return table


#: past forms -> base form
IRREGULAR_FORMS: dict[str, str] = _table()
