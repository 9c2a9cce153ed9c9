"""``cq embed fetch --from`` on archives that say or hold more than a model: zip bombs of
zeros (a few megabytes unpacking to gigabytes), one inside a wheel's ``model.zip``, a header
that lies, a directory whose file sizes lie. Each must end in one ``cq:`` line, having written
little and held little: cq runs in a child of a small measuring process (its
``RUSAGE_CHILDREN`` is that one run's), with a file-size limit so that a regression fails
with a short file instead of filling the disk. The archives are written here byte by byte:
their deflate streams are one compressed block of zeros repeated, so a test never holds or
compresses the gigabytes its archive stands for."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from embed_models import tiny_model

HAS_EXTRA = all(importlib.util.find_spec(m) for m in ("numpy", "safetensors", "tokenizers"))
pytestmark = pytest.mark.skipif(not HAS_EXTRA, reason="the [embed] extra is not installed")

MB, GB = 1024**2, 1024**3
_BLOCK = 16 * MB  # the zeros one repeated deflate block stands for
FILE_LIMIT = 256 * MB  # RLIMIT_FSIZE of the cq run: a regression writes this, not gigabytes
WRITTEN_MAX = 64 * MB  # what a refused fetch may have written, all files together
RSS_MAX = 300 * MB

MEASURE = """
import json, resource, signal, subprocess, sys

def limits():
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails, EFBIG

run = subprocess.run(sys.argv[1:], capture_output=True, preexec_fn=limits, timeout=300)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({{
    "code": run.returncode, "stderr": run.stderr.decode(errors="replace"),
    "rss": used.ru_maxrss * 1024, "written": used.ru_oublock * 512,
}}))
"""


def fetch_measured(source: Path) -> dict:
    """``cq embed fetch --from source`` in a child of a measuring process: its exit code,
    stderr, peak RSS and bytes written."""
    argv = [sys.executable, "-m", "cq", "embed", "fetch", "tests/bomb", "--from", str(source)]
    code = MEASURE.format(limit=FILE_LIMIT)
    run = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, timeout=360, check=True
    )
    return json.loads(run.stdout)


def zeros_deflated(n: int) -> bytes:
    """The raw deflate stream of ``n`` zero bytes (a multiple of 16 MB), built from one
    compressed block repeated: a full flush makes each block stand alone."""
    assert n % _BLOCK == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(_BLOCK)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * (n // _BLOCK) + c.flush(zlib.Z_FINISH)


def crc_of_zeros(n: int) -> int:
    """``zlib.crc32(bytes(n))`` without the bytes: the CRC register's run over a zero byte is
    an affine map of the register, so n of them are that map composed n times (by squaring)."""

    def apply(f: tuple[list[int], int], v: int) -> int:
        cols, const = f
        for i in range(32):
            if v >> i & 1:
                const ^= cols[i]
        return const

    def compose(f: tuple[list[int], int], g: tuple[list[int], int]) -> tuple[list[int], int]:
        c = f[1]
        return [apply(f, col) ^ c for col in g[0]], apply(f, g[1])

    one_const = zlib.crc32(b"\0", 0)
    step = ([zlib.crc32(b"\0", 1 << i) ^ one_const for i in range(32)], one_const)
    crc = 0
    while n:
        if n & 1:
            crc = apply(step, crc)
        step, n = compose(step, step), n >> 1
    return crc


def test_the_crc_of_zeros_is_zlibs() -> None:
    for n in (0, 1, 7, 4096, 100_003):
        assert crc_of_zeros(n) == zlib.crc32(bytes(n))


class Member:
    """One entry of a hand-written zip: its packed bytes and what its headers say."""

    def __init__(self, name: str, packed: bytes, size: int, crc: int, method: int) -> None:
        self.name, self.packed, self.size, self.crc, self.method = name, packed, size, crc, method


def zeros(name: str, n: int, *, declared: int | None = None) -> Member:
    """A member of ``n`` zero bytes, deflated; its headers say ``declared`` (default n)."""
    return Member(name, zeros_deflated(n), n if declared is None else declared, crc_of_zeros(n), 8)


def stored(name: str, data: bytes) -> Member:
    return Member(name, data, len(data), zlib.crc32(data), 0)


def packed(name: str, data: bytes) -> Member:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return Member(name, c.compress(data) + c.flush(), len(data), zlib.crc32(data), 8)


def write_zip(members: list[Member]) -> bytes:
    """A zip of ``members`` exactly as their headers say, true or not (sizes < 4 GB)."""
    out, directory = io.BytesIO(), io.BytesIO()
    for m in members:
        name, offset = m.name.encode(), out.tell()
        fields = (20, 0, m.method, 0, 0x21, m.crc, len(m.packed), m.size, len(name), 0)
        out.write(struct.pack("<I5H3I2H", 0x04034B50, *fields) + name + m.packed)
        directory.write(
            struct.pack("<IH5H3I5H2I", 0x02014B50, 20, *fields, 0, 0, 0, 0, offset) + name
        )
    start, table = out.tell(), directory.getvalue()
    n = len(members)
    out.write(table + struct.pack("<I4H2IH", 0x06054B50, 0, 0, n, n, len(table), start, 0))
    return out.getvalue()


def model_files(where: Path) -> dict[str, bytes]:
    model = tiny_model(where)
    return {
        str(p.relative_to(model)): p.read_bytes() for p in sorted(model.rglob("*")) if p.is_file()
    }


def assert_refused_lightly(result: dict, message: str, cache: Path) -> None:
    """One ``cq:`` line, little written, little held, nothing left in the models dir."""
    assert result["code"] == 2, result
    assert result["stderr"].count("\n") == 1 and result["stderr"].startswith("cq: "), result
    assert message in result["stderr"], result
    assert result["written"] < WRITTEN_MAX, result
    assert result["rss"] < RSS_MAX, result
    models = cache / "embed" / "models"
    assert not models.exists() or not any(models.iterdir()), list(models.iterdir())


def test_a_zip_bomb_is_refused_before_a_byte_is_written(tmp_path: Path, _isolated_cache) -> None:
    """4.5 MB that say (truly) 1.5 GB of configuration and 3 GB of weights."""
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(
        write_zip(
            [
                zeros("m/config.json", 1536 * MB),
                zeros("m/model.safetensors", 3 * GB),
                stored("m/tokenizer.json", b"{}"),
            ]
        )
    )
    assert bomb.stat().st_size < 5 * MB
    result = fetch_measured(bomb)
    said = f"cq: config.json in {bomb} is 1.5 GB, more than the 1 MB cq takes for it\n"
    assert result["stderr"] == said
    assert_refused_lightly(result, said, _isolated_cache)


def test_a_bomb_within_every_bound_is_refused_by_how_far_it_unpacks(
    tmp_path: Path, _isolated_cache
) -> None:
    """1.5 GB of zero 'weights' is under the weights' bound, but 1.5 MB never unpacks to
    that from a real model's floats."""
    files = model_files(tmp_path / "tiny")
    del files["model.safetensors"]
    bomb = tmp_path / "bomb.zip"
    members = [packed(n, data) for n, data in files.items()]
    bomb.write_bytes(write_zip([*members, zeros("model.safetensors", 1536 * MB)]))
    result = fetch_measured(bomb)
    assert_refused_lightly(result, "model.safetensors in", _isolated_cache)
    assert "into 1.5 GB: a zip bomb, not a model file" in result["stderr"]


@pytest.mark.parametrize("inside", ["a bomb", "zeros"])
def test_a_wheel_whose_model_zip_is_a_bomb_is_refused_without_unpacking_it(
    tmp_path: Path, _isolated_cache, inside: str
) -> None:
    """The wheel layout (a package with a ``model.zip``): the nested archive is read as a
    stream, so neither a bomb inside it nor a 'model.zip' of zeros is ever held whole."""
    files = model_files(tmp_path / "tiny")
    del files["model.safetensors"]
    if inside == "a bomb":
        inner = write_zip(
            [*(packed(n, d) for n, d in files.items()), zeros("model.safetensors", 1536 * MB)]
        )
        nested = stored("pkg/model.zip", inner)
        expect = "model.safetensors in "
    else:
        nested = zeros("pkg/model.zip", 1536 * MB)
        expect = "model.zip in "
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(write_zip([stored("pkg/__init__.py", b""), nested]))
    result = fetch_measured(wheel)
    assert_refused_lightly(result, expect, _isolated_cache)
    assert "a zip bomb, not a model file" in result["stderr"]


def test_a_header_that_understates_a_member_never_lets_more_out(
    tmp_path: Path, _isolated_cache
) -> None:
    """config.json's headers say 600 bytes; its data unpacks to 1 GB. What is read stops at
    what the header said, and the CRC then tells the lie (a guard: zipfile stops there too)."""
    files = model_files(tmp_path / "tiny")
    del files["config.json"]
    bomb = tmp_path / "liar.zip"
    members = [packed(n, data) for n, data in files.items()]
    bomb.write_bytes(write_zip([*members, zeros("config.json", GB, declared=600)]))
    result = fetch_measured(bomb)
    assert_refused_lightly(result, f"cq: cannot read {bomb}: Bad CRC-32", _isolated_cache)


def test_a_directory_file_bigger_than_its_stat_says_is_cut_at_its_bound(
    tmp_path: Path, _isolated_cache
) -> None:
    """A file whose stat says 0 bytes and reads 5 MB (a procfs file stands in for a
    filesystem that states sizes wrongly) is stopped at the 1 MB a config file may be."""
    source = Path("/proc/kallsyms")
    if not os.access(source, os.R_OK) or source.stat().st_size != 0:
        pytest.skip("needs a readable /proc/kallsyms whose stat says 0 bytes")
    with source.open("rb") as f:
        if len(f.read(2 * MB)) <= MB:
            pytest.skip("/proc/kallsyms reads less than 1 MB here")
    model = tiny_model(tmp_path / "tiny")
    (model / "config.json").unlink()
    (model / "config.json").symlink_to(source)
    result = fetch_measured(model)
    said = f"cq: config.json in {model} holds more than the 1 MB cq takes for it\n"
    assert result["stderr"] == said
    assert_refused_lightly(result, said, _isolated_cache)


@pytest.mark.parametrize("layout", ["zip", "wheel"])
def test_a_model_in_a_zip_or_in_a_wheels_model_zip_installs(
    tmp_path: Path, _isolated_cache, layout: str
) -> None:
    files = model_files(tmp_path / "tiny")
    model_zip = tmp_path / "model.zip"
    with zipfile.ZipFile(model_zip, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(f"tiny/{name}", data)
    source = model_zip
    if layout == "wheel":
        source = tmp_path / "tiny-1.0-py3-none-any.whl"
        with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("tiny/__init__.py", "")
            z.write(model_zip, "tiny/model.zip")
            z.writestr("tiny-1.0.dist-info/RECORD", "")
    result = fetch_measured(source)
    assert result["code"] == 0, result
    where = _isolated_cache / "embed" / "models" / "tests--bomb"
    assert {str(p.relative_to(where)) for p in where.rglob("*") if p.is_file()} == set(files)
    assert all((where / name).read_bytes() == data for name, data in files.items())
