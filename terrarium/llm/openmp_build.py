"""The adaptive OpenMP runtime's small C library (``openmp_adapt.c``): built once into the
cache with the system's C compiler, and handed to the model server's process.

``TERRARIUM_OPENMP=adaptive`` needs it to change how llama.cpp's threads wait while the
server runs (see the C file and ``server_child.CoreWatch``). ``terrarium models`` builds it
(``scripts/setup.sh`` runs that); a start that finds it missing builds it then (~0.3 s,
once). The file's name carries a digest of the source, so a changed source is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from terrarium.llm.server_child import (
    LLVM_LIBRARY,
    PEERS_ENV,
    SHIM_ENV,
    openmp_env,
    openmp_runtime,
)
from terrarium.paths import cache_dir

__all__ = ["SOURCE", "build_shim", "openmp_settings", "peers_dir", "shim_file", "shim_settings"]

SOURCE = Path(__file__).with_name("openmp_adapt.c")


def shim_file() -> Path:
    """Where the built library is (or would be) for this source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return cache_dir() / "openmp" / f"openmp_adapt-{digest}.so"


def peers_dir() -> Path:
    """Where the processes sharing a model server note themselves for its core watch
    (``server_child.PEERS_ENV``): ``<user cache dir>/servers/peers``."""
    return cache_dir() / "servers" / "peers"


def build_shim() -> Path:
    """The library, built now if it is not there yet; OSError naming what is missing."""
    target = shim_file()
    if target.is_file():
        return target
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise OSError("no C compiler (on Debian: apt-get install gcc)")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run(
            [cc, "-O2", "-shared", "-fPIC", "-o", tmp, str(SOURCE), f"-l:{LLVM_LIBRARY}", "-ldl"],
            capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            hint = " (on Debian: apt-get install libomp5)" if "omp" in last else ""
            raise OSError(f"{cc} could not build {SOURCE.name}: {last}{hint}")
        os.replace(tmp, target)  # whole or not at all: a start beside this one may read it
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def shim_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """What the model server's process needs beyond ``openmp_env``: under ``adaptive``,
    where the library is (built now if need be), or nothing (the process then says why it
    runs under GNU OpenMP: :func:`server_child.load_openmp`), and where the processes
    sharing it note themselves (:func:`peers_dir`)."""
    try:
        if openmp_runtime(environ) != "adaptive":
            return {}
    except ValueError:  # reported where the server starts
        return {}
    out = {} if PEERS_ENV in environ else {PEERS_ENV: str(peers_dir())}
    if SHIM_ENV in environ:
        return out
    try:
        return {**out, SHIM_ENV: str(build_shim())}
    except (OSError, subprocess.SubprocessError) as exc:
        return {**out, SHIM_ENV: f"!{exc}"}  # the reason, for the process's one-line notice


def openmp_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """Every setting a model server's process needs for its OpenMP runtime that ``environ``
    leaves to us: the runtime's own (``server_child.openmp_env``) and, under ``adaptive``,
    where its library is. The child's environment and the in-process server's both."""
    return {**openmp_env(environ), **shim_settings(environ)}
