"""The optional dense signal (``pip install 'cq-search[embed]'``): code units ranked by a
sentence-embedding model's reading of a question, fused into the question's order.

In: a question and its root (the search side), or a root whose repository index exists (the
build side). Out: ``cq.model.DenseRanks`` for the first files of the fused order, which
``cq/index/dense.py`` fuses by reciprocal rank; on disk, one vector per unit text in cq's
cache dir. Off unless ``[embed] enabled`` (``CQ_EMBED=on``); the measured decision is in
``cq/model/embed_tuning.py``. Without the extra installed nothing here imports numpy,
tokenizers or safetensors, and a search answers as it would without the signal.

Open ``dense.py`` first (what a search does: embed the question, read stored vectors, never
build), then ``build.py`` (what is embedded and when), ``background.py`` (the server starts
builds), ``store.py`` (the SQLite layout), ``model.py`` (the encoder, and why numpy) and
``models.py`` (the one-time download, ``cq embed fetch``).
"""
