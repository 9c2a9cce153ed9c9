"""The caps enforced while rg streams: files, matches per file, total matches."""

from __future__ import annotations

from cq.model import CapHit, Limits

_CAP_ORDER: dict[CapHit, int] = {"none": 0, "matches_per_file": 1, "files": 2, "total_matches": 3}


class CapTracker:
    """Counts what was accepted and says whether to take, skip, or stop."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._per_file: dict[str, int] = {}
        self.total = 0
        self.caps_hit: CapHit = "none"
        self.stopped = False

    def _hit(self, cap: CapHit) -> None:
        if _CAP_ORDER[cap] > _CAP_ORDER[self.caps_hit]:
            self.caps_hit = cap

    def admit_file(self, path: str) -> bool:
        """Called at a file's first match; False (and stop) once max_files is reached."""
        if path in self._per_file:
            return True
        if len(self._per_file) >= self._limits.max_files:
            self._hit("files")
            self.stopped = True
            return False
        self._per_file[path] = 0
        return True

    def admit_match(self, path: str) -> bool:
        """Called per submatch; False to skip it. Sets ``stopped`` when the total cap is hit."""
        if self.total >= self._limits.max_total_matches:
            self._hit("total_matches")
            self.stopped = True
            return False
        count = self._per_file.get(path, 0)
        if count >= self._limits.max_matches_per_file:
            self._hit("matches_per_file")
            return False
        self._per_file[path] = count + 1
        self.total += 1
        return True

    @property
    def matched_files(self) -> int:
        return len(self._per_file)
