"""English stopwords dropped by the porterlite tokenizer before stemming.

A compact list (pronouns, auxiliaries, articles, prepositions, conjunctions, a few
frequent adverbs, and apostrophe-less contractions, since the tokenizer turns "don't" into
"dont"). Words that carry meaning in notes ("may" the month, "down" as in an outage, "new")
are kept.
"""

from __future__ import annotations

__all__ = ["STOPWORDS"]

_WORDS = """
    a an the
    i me my myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs
    themselves
    this that these those who whom whose which what
    am is are was were be been being have has had having do does did doing done
    will would shall should can could might must
    and or but nor so yet if then else than because while although though
    unless until whether either neither both each every all any some such no not
    of in on at by for with without within from to into out off over under
    about above below after before again against between through
    during upon up
    here there where when why how however also just only very too
    more most less few many much other own same
    ever never now once still always perhaps
    dont doesnt didnt isnt arent wasnt werent cant cannot couldnt wouldnt shouldnt
    wont hasnt havent hadnt im ive youre youve youll hes shes theyre
    theyve weve thats theres whats
    """

STOPWORDS: frozenset[str] = frozenset(_WORDS.split())
