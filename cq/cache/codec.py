"""Transparent compression of stored values: a per-row codec flag, zstd for large values.

Measured on a real cache (the stdlib, chrono and marshmallow searched, identifier and
natural-language queries; ``bench/cache_growth.py --part codecs``, best of 3, a loaded
2-core machine): ratio, compress ms, decompress ms for all values of a kind.

| values | zlib -6 | zstd -3 | zstd -7 |
|---|---|---|---|
| rewrite vocabulary >= 4 KB (2, 13.2 MB) | 3.83x, 1155, 131 | 3.93x, 156, 38 | 4.64x, 420, 31 |
| python records >= 4 KB (379, 5.2 MB) | 3.98x, 385, 54 | 2.88x, 85, 30 | 2.94x, 82, 11 |
| rust records >= 4 KB (32, 0.75 MB) | 3.83x, 44, 2.5 | 2.85x, 2.7, 1.1 | 2.94x, 9.2, 0.7 |
| python records < 4 KB (2,505, 2.8 MB) | 2.39x, 306, 64 | 2.11x, 79, 29 | |
| enrichment results (186, 0.06 MB) | 1.53x | 1.44x | |

zlib compresses 7x and decompresses 1.5-4x slower than zstd; the vocabulary is read by every
warm natural-language search, records by every warm search. So values use zstd (the
``zstandard`` package: the reference library's maintained binding, wheels on PyPI, 0.7 ms
to import on top of cq's own imports). Values from 64 KB (vocabularies) get level 7: 4.6x
instead of 3.9x for the same decompression time. Values under 4 KB stay raw: one call per
value costs a warm search (2,505 records: +29 ms) for 2x on 2.8 MB. A zstd frame carries a
checksum, so a damaged compressed value is detected here and reads as a miss.
"""

from __future__ import annotations

RAW = 0
ZSTD = 1
_COMPRESS_MIN = 4096  # below: a call per value for 2x at best (table above)
_LARGE = 64 * 1024  # from here level 7 (vocabularies: stdlib 3.9 -> 4.6x, unittest 3.3 -> 3.6x)
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
