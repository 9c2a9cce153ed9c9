"""``python -m cq``."""

from cq.cli import main

raise SystemExit(main())
