"""A small graph-store project for rewrite tests: the implementing functions plus distractors."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

FILES = {
    "graphstore/__init__.py": "from graphstore.store import GraphStore\n",
    "graphstore/store.py": '''"""Nodes and edges kept in memory."""


class GraphStore:
    def __init__(self):
        self.edges = {}
        self.nodes = set()

    def insert_edge(self, src, dst):
        """Insert an edge between two nodes."""
        self.edges.setdefault(src, set()).add(dst)
        self.nodes.update((src, dst))

    def remove_node(self, node):
        self.nodes.discard(node)
        self.edges.pop(node, None)

    def neighbours(self, node):
        return sorted(self.edges.get(node, ()))
''',
    "graphstore/spans.py": '''"""Source positions."""


def span_to_byte_offset(text, line, column):
    """Convert a (line, column) span start into a byte offset of the UTF-8 text."""
    prefix = "".join(text.splitlines(keepends=True)[: line - 1])
    return len(prefix.encode()) + len(text.splitlines()[line - 1][:column].encode())


def line_count(text):
    return text.count("\\n") + 1
''',
    "graphstore/report.py": '''"""Pretty printing: talks about graphs and edges, stores nothing."""

from graphstore.store import GraphStore


def describe(store: GraphStore) -> str:
    # the graph and its edges, as text
    return ", ".join(f"{a}->{b}" for a, bs in store.edges.items() for b in bs)


def loaded_config():
    return {"format": "text", "edges": True}
''',
    "graphstore/config.py": '''def load_config(path):
    """Read the settings file."""
    with open(path) as fh:
        return dict(line.split("=", 1) for line in fh if "=" in line)
''',
    "tests/test_store.py": """from graphstore.store import GraphStore


def test_insert_edge():
    store = GraphStore()
    store.insert_edge(1, 2)
    assert store.neighbours(1) == [2]
""",
    "notes/regex_bait.py": 'PATTERN = "foo.*bar"  # literally\nOTHER = "fooXXbar"\n',
}


def graph_repo(root: Path) -> Path:
    return write_tree(root, FILES)
