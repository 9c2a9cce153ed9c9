"""cq's benchmarks: the maintained gates here, one-off studies in ``studies/``.

Run from the repository root as modules (``python -m bench.latency``), so the scripts share
``_common`` and ``_loc`` as ordinary imports; see README.md beside this file.
"""
