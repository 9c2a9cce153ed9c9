"""Transparent compression of stored values: a per-row codec flag, zstd for large values.

Measured on a real cache (stdlib and chrono searches; `bench/cache_growth.py --codecs`):

| values | zlib -6 | zstd -3 | zstd -7 |
|---|---|---|---|
| rewrite vocabulary (13 MB, stdlib) | 3.78x, 950 ms in, 92 ms out | 3.88x, 52 ms in, 11 ms out | 4.58x, 150 ms in, 10 ms out |
| python records >= 4 KB (231, 2.7 MB) | 3.80x, 111 ms in, 12 ms out | 2.83x, 13 ms in, 8 ms out | |
| rust records >= 4 KB (32, 0.75 MB) | 3.82x, 35 ms in, 6 ms out | 2.86x, 1.8 ms in, 0.7 ms out | |
| records < 4 KB, enrichment results | 1.4x at best: not worth a call per value | | |

zlib decompresses 8x slower (the vocabulary is read by every warm natural-language search),
so values use zstd (the ``zstandard`` package: the reference library's maintained binding,
wheels on PyPI, 0.7 ms to import on top of cq's own imports). Large values (the vocabulary)
get level 7, where decompression costs the same as level 3 and the entry is 4.6x smaller.
Values under 4 KB stay raw. A zstd frame carries a checksum, so a damaged compressed value is
detected here and reads as a miss.
"""

from __future__ import annotations

RAW = 0
ZSTD = 1
_COMPRESS_MIN = 4096  # below: ratio 1.4x at best, a call per value (table above)
_LARGE = (
    64 * 1024
)  # at and above: level 7 (vocabularies: stdlib 3.9x -> 4.6x, unittest 3.3x -> 3.6x)
_KEEP_RATIO = 0.9  # store raw unless compression saves at least 10%


class CodecError(Exception):
    """A stored value that cannot be decoded (damaged bytes or an unknown codec)."""


def encode(value: bytes) -> tuple[int, bytes]:
    """(codec, stored bytes) for ``value``: compressed where it pays, else raw."""
    if len(value) < _COMPRESS_MIN:
        return RAW, value
    import zstandard

    level = 7 if len(value) >= _LARGE else 3
    packed = zstandard.ZstdCompressor(level=level, write_checksum=True).compress(value)
    if len(packed) > len(value) * _KEEP_RATIO:
        return RAW, value
    return ZSTD, packed


def decode(codec: int, stored: bytes) -> bytes:
    """The original value; ``CodecError`` when ``stored`` is damaged."""
    if codec == RAW:
        return stored
    if codec != ZSTD:
        raise CodecError(f"unknown codec {codec}")
    import zstandard

    try:
        return zstandard.ZstdDecompressor().decompress(stored)
    except zstandard.ZstdError as exc:
        raise CodecError(str(exc)) from exc
