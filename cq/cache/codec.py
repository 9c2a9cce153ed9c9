"""Stored values: a checksum binding each value to its key, zstd for large values.

Every stored value starts with a CRC-32 of its namespace, key, codec and stored bytes,
checked on every read. A damaged value (a flipped byte, a truncated blob) and a value moved under
another key (two rows' values swapped) both fail it and read as a miss, to be recomputed:
the cache never serves a value other than the one written under that key. CRC-32 catches
every change of up to 4 consecutive bytes and misses any other with odds of 1 in 2^32, the
strength of zstd's own frame checksum; it is a few times cheaper than a 64-bit blake2b
(``bench/results/cache-figures.md``).

Compression (``python -m bench.cache_growth --part codecs`` on a real cache; the table is in
``bench/results/cache-figures.md``): zlib compresses several times and decompresses a few
times slower than zstd, and the vocabulary is read by every warm natural-language search,
records by every warm search. So values use zstd (the ``zstandard`` package: the reference
library's maintained binding, wheels on PyPI, cheap to import), at level 3 whatever their
size: a vocabulary (the stdlib's: 3.7 MB) is written by the first search that needs it,
which waits for it, and level 7 took 61 ms against 19 for a blob 11% smaller than level 3's
(1.03 against 1.16 MB; decompression 4-6 ms either way). Small values stay raw: a call per
value costs a warm search more than the little it saves.
"""

from __future__ import annotations

import zlib

# Codec ids 0 and 1 were values without the checksum: unknown now, so read as damaged.
RAW = 2  # checksum, then the value
ZSTD = 3  # checksum, then a zstd frame of the value
_SUM = 4  # bytes of the checksum
_COMPRESS_MIN = 4096  # below: a call per value for 2x at best (bench/results/cache-figures.md)
_KEEP_RATIO = 0.9  # store raw unless compression saves at least 10%
_LEVEL = 3  # see the module docstring


class CodecError(Exception):
    """A stored value that cannot be trusted (damaged, moved, or an unknown codec)."""


def binding(namespace: str, key: str) -> bytes:
    """What a value's checksum covers besides its bytes: where it is stored."""
    return f"{namespace}\0{key}\0".encode(errors="surrogatepass")


def _checksum(where: bytes, kind: int, body: bytes) -> bytes:
    """Over the place, the codec (a raw value must not read as a frame) and the bytes."""
    return zlib.crc32(body, zlib.crc32(b"%s%d\0" % (where, kind))).to_bytes(_SUM, "big")


def encode(value: bytes, where: bytes) -> tuple[int, bytes]:
    """(codec, stored bytes) for ``value`` stored at ``where`` (``binding``): compressed
    where it pays, else raw, behind the checksum."""
    kind, body = RAW, value
    if len(value) >= _COMPRESS_MIN:
        import zstandard

        packed = zstandard.ZstdCompressor(level=_LEVEL, write_checksum=True).compress(value)
        if len(packed) <= len(value) * _KEEP_RATIO:
            kind, body = ZSTD, packed
    return kind, _checksum(where, kind, body) + body


def decode(codec: object, stored: bytes, where: bytes) -> bytes:
    """The value written at ``where``; ``CodecError`` when ``stored`` is not that."""
    if type(codec) is not int or codec not in (RAW, ZSTD):
        raise CodecError(f"unknown codec {codec!r}")
    body = stored[_SUM:]
    if len(stored) < _SUM or stored[:_SUM] != _checksum(where, codec, body):
        raise CodecError("checksum mismatch")
    if codec == RAW:
        return body
    import zstandard

    try:
        return zstandard.ZstdDecompressor().decompress(body)
    except zstandard.ZstdError as exc:
        raise CodecError(str(exc)) from exc
