"""Repository index (placeholder docstring)."""
