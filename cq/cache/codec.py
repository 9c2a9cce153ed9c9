"""Stored values: a checksum binding each value to its key, zstd for large values.

Every stored value starts with a CRC-32 of its namespace, key, codec and stored bytes,
checked on every read. A damaged value (a flipped byte, a truncated blob) and a value moved under
another key (two rows' values swapped) both fail it and read as a miss, to be recomputed:
the cache never serves a value other than the one written under that key. CRC-32 catches
every change of up to 4 consecutive bytes and misses any other with odds of 1 in 2^32, the
strength of zstd's own frame checksum; it costs ~0.5 us a value (zlib's, hardware-assisted)
where a 64-bit blake2b cost ~1.7 us (3,000 values of 1 KB, 1.5 ms against 5.2 ms).

Compression, measured on a real cache (the stdlib, chrono and marshmallow searched,
identifier and natural-language queries; ``bench/cache_growth.py --part codecs``, best of 3,
a loaded 2-core machine): ratio, compress ms, decompress ms for all values of a kind.

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
value costs a warm search (2,505 records: +29 ms) for 2x on 2.8 MB.
"""

from __future__ import annotations

import zlib

# Codec ids 0 and 1 were values without the checksum: unknown now, so read as damaged.
RAW = 2  # checksum, then the value
ZSTD = 3  # checksum, then a zstd frame of the value
_SUM = 4  # bytes of the checksum
_COMPRESS_MIN = 4096  # below: a call per value for 2x at best (table above)
_LARGE = 64 * 1024  # from here level 7 (vocabularies: stdlib 3.9 -> 4.6x, unittest 3.3 -> 3.6x)
_KEEP_RATIO = 0.9  # store raw unless compression saves at least 10%


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

        level = 7 if len(value) >= _LARGE else 3
        packed = zstandard.ZstdCompressor(level=level, write_checksum=True).compress(value)
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
