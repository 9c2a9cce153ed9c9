"""Words that say nothing about where code lives: English function words and the vocabulary
of bug reports ("error", "expected", "version"). Dropped from index queries only."""

from __future__ import annotations

_WORDS = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done down during each even few
for from further had has have having he her here hers him his how however i if in into is it
its itself just let like may me might more most much must my no nor not now of off on once
only or other our out over own same she should so some such than that the their them then
there these they this those through to too under until up us very was we were what when
where which while who whom why will with would you your yours
bug bugs error errors issue issues expected behavior behaviour actual reproduce reproduced
steps version versions environment example examples please thanks thank hi hello work works
working worked seems seem get gets got use used using want wanted try tried trying problem
problems describe description following python rust traceback recent call last raise raised
"""
STOPWORDS = frozenset(_WORDS.split())
