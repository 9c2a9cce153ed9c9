"""Natural-language queries -> identifier and literal patterns (heuristic, offline, LLM).

In: a ``SearchRequest`` whose query reads as English or is a pasted issue. Out: a ``Rewrite``
(patterns for the one rg run, a focus, path hints for the ranking, a ``RewriteSummary``).
Open ``run.py`` first; ``heuristic.py`` decides whether to rewrite, ``extract.py`` finds the
code the text names, ``offline.py`` maps the rest onto ``vocabulary.py``'s defined names,
``llm.py`` asks a model (``config.py``, ``validate.py``), ``memory.py`` resolves "it".
"""

from cq.rewrite.heuristic import should_rewrite
from cq.rewrite.run import Rewrite, remember_primary, rewrite_query, rewrite_trigger

__all__ = ["Rewrite", "remember_primary", "rewrite_query", "rewrite_trigger", "should_rewrite"]
