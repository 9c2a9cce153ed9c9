"""One-off studies and tuning tools: what a tuned number in ``cq/`` cites, and experiments
whose figures live in ``bench/results/``. Not regression gates; run as
``python -m bench.studies.NAME`` from the repository root."""
