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

from terrarium.llm.server_child import LLVM_LIBRARY, SHIM_ENV, openmp_env, openmp_runtime
from terrarium.paths import cache_dir

__all__ = ["SOURCE", "build_shim", "openmp_settings", "shim_file", "shim_settings"]

SOURCE = Path(__file__).with_name("openmp_adapt.c")


def shim_file() -> Path:
    """Where the built library is (or would be) for this source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    return cache_dir() / "openmp" / f"openmp_adapt-{digest}.so"


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
    runs under GNU OpenMP: :func:`server_child.load_openmp`)."""
    try:
        if openmp_runtime(environ) != "adaptive" or SHIM_ENV in environ:
            return {}
    except ValueError:  # reported where the server starts
        return {}
    try:
        return {SHIM_ENV: str(build_shim())}
    except (OSError, subprocess.SubprocessError) as exc:
        return {SHIM_ENV: f"!{exc}"}  # the reason, for the process's one-line notice


def openmp_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """Every setting a model server's process needs for its OpenMP runtime that ``environ``
    leaves to us: the runtime's own (``server_child.openmp_env``) and, under ``adaptive``,
    where its library is. The child's environment and the in-process server's both."""
    return {**openmp_env(environ), **shim_settings(environ)}
