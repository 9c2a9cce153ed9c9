"""Are a def's or class's symbol tables the same compiled from the top-level statements
holding it as from its whole file?

``cq.enrich.bindings`` compiles, for a file whose flagged hits all sit in a def or class,
only the top-level statements holding them (with the file's future imports), and uses
a scope's table when its qualified name starts with a def or class name only those
statements define. For a sample of files of a tree this takes every top-level statement
that holds a def or class (``ast``), compiles it that way, and compares each scope's table
the bindings would use (every name's raw flags) with the whole file's; it also counts the
scopes they would leave to the whole file.

    python -m bench.studies.symbol_runs                  # 600 files of the stdlib
    python -m bench.studies.symbol_runs --root DIR --files 3000
"""

from __future__ import annotations

import argparse
import ast
import hashlib
from pathlib import Path

from bench._common import sample_arguments, sampled_python_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sample_arguments(parser, places=False)
    args = parser.parse_args()

    from cq.enrich.bindings import _statements, compile_tables, table_key
    from cq.enrich.symbols import python_symbols
    from cq.parse import SourceFile

    files, _ = sampled_python_files(args.root, args.files, args.seed)
    statements = scopes = same = shared = 0  # shared: scopes left to the whole file
    differ: list[str] = []
    for path in files:
        data = Path(path).read_bytes()
        try:
            text = data.decode("utf-8")
            tree = ast.parse(data)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        whole = python_symbols(text, path)
        if not whole:
            continue
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()  # a file's statements are
        source = SourceFile(path, "python", data, text, digest)  # kept by its digest

        for node in tree.body:
            if not any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                for n in ast.walk(node)
            ):
                continue
            statements += 1
            runs, own = _statements(source, [node.lineno])
            key = table_key(digest, runs)
            part = compile_tables([(key, source)])[key]
            for scope, table in part.items():
                if not scope:
                    continue  # the module's: never read from a statement's table
                if scope.partition(".")[0] not in own:
                    shared += 1  # the bindings read the whole file's tables
                    continue
                scopes += 1
                if whole.get(scope) == table:
                    same += 1
                else:
                    differ.append(f"{path}:{node.lineno} {scope}")
    for line in differ[:10]:
        print(line)
    print(
        f"files {len(files)}; top-level statements with a def or class {statements}; scopes "
        f"left to the whole file (under a name defined elsewhere too, or no def or class "
        f"name) {shared}; scopes compared {scopes}: same {same}, differ {len(differ)}"
    )


if __name__ == "__main__":
    main()
