"""``cq search --files``: the files a search would read, as ``rg --files`` lists them with the
search's own scope (languages, globs, ``--in``, hidden and ignored files, depth, size)."""

from __future__ import annotations

import os
import subprocess

from cq.candidates.collect import scope_args
from cq.candidates.rg_errors import glob_error
from cq.errors import SearchFailedError, UsageError
from cq.model import Scope
from cq.model.language import language_of
from cq.terminal import visible
from cq.tools import find_rg, rg_env


def searched_files(scope: Scope) -> list[str]:
    """The files, relative to the root, in path order; an ``--include`` glob naming other
    files than Python and Rust admits none of them, as it admits none of their hits."""
    argv = [find_rg(), "--files", "--null", "--no-config", "--no-ignore-messages"]
    argv += ["--sort", "path"]
    argv += [*scope_args(scope), "--", scope.in_dir or "."]
    try:
        proc = subprocess.run(
            argv,
            cwd=scope.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=rg_env(),
            timeout=scope.limits.timeout_seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SearchFailedError(
            f"rg listed files for more than {scope.limits.timeout_seconds:g} s (--timeout)"
        ) from None
    if proc.returncode == 2 and not proc.stdout:
        message = visible(" ".join(proc.stderr.decode("utf-8", "replace").split()))
        if (bad_glob := glob_error(message, tuple(scope.exclude))) is not None:
            raise UsageError(bad_glob)
        raise SearchFailedError(f"rg failed: {message or 'exit status 2'}")
    # NUL-separated: a file name may hold a newline; one that is not UTF-8 as the search
    # and the file system read it (its bytes as lone surrogates), the name -l prints
    names = os.fsdecode(proc.stdout).split("\0")
    paths = (name.removeprefix("./") for name in names if name)
    return [path for path in paths if language_of(path, scope.lang) is not None]
