"""The ``code`` share's weight held out by repository: answer11's ``loo_weights.py`` over
reports of the shipped code, each Relevant Function given the signal ``covers - code`` (what
its string literals added to its share, times ``covers``' weight 0.8; 0 where the question
is no how-question), re-weighed from the shipped -1.0 (all of it taken away again) over its
grid: -1.0 is the shipped rule, 0 none of it.

    python bench/results/2026-11-30-answer12/loo_code.py REPORTS_DIR concept,title

Writes the derived reports to a temporary directory and runs ``loo_weights.py`` on them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> None:
    reports, kinds = Path(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="loo-code-") as tmp:
        for path in reports.glob("*.json"):
            raw = path.read_bytes()
            if raw:
                data = json.loads(raw)
                for s in data["sections"]:
                    for f in s.get("functions", []) if s["type"] == "functions" else []:
                        sc = f["scores"]
                        sc["literal"] = round(
                            0.8 * (sc.get("covers", 0.0) - sc.get("code", sc.get("covers", 0.0))), 6
                        )
                raw = json.dumps(data).encode()
            (Path(tmp) / path.name).write_bytes(raw)
        script = "bench/results/2026-11-30-answer11/loo_weights.py"
        subprocess.run([sys.executable, script, tmp, kinds, "literal", "-1.0"], check=True)


if __name__ == "__main__":
    main()
