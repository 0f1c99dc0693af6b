"""The C allocator, told to keep freed memory for the next tensor; oneDNN's caches of
compiled products, told to keep fewer of them when decoding.

glibc gives large freed blocks back to the kernel: blocks over its mmap threshold are
unmapped at once, and free memory at the top of the heap is trimmed once it exceeds the
trim threshold (both start low and adapt to the largest block freed so far). A tensor
allocated after that page-faults once per 4 KiB page, each page zeroed by the kernel.
Training and decoding allocate and free several tensors of batch x vocabulary size
(5-40 MB) at every step, so on the CPU those faults took 5-25 % of a step
(docs/benchmarks.md, "The allocator"). `keep_freed_memory` raises both thresholds once
per process, as the entry point does before any work; memory the process has freed then
stays mapped (at most TRIM_THRESHOLD of it at the heap's top) and is reused.
"""
from __future__ import annotations

import ctypes
import functools
import os
import platform

#: mallopt's parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: blocks up to this size come from the heap, not their own mapping (glibc's maximum
#: on 64-bit)
MMAP_THRESHOLD = 32 << 20
#: free memory at the heap's top beyond this is given back to the kernel
TRIM_THRESHOLD = 256 << 20
#: glibc's own environment variables: a user who sets one keeps glibc's behaviour
GLIBC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def _user_chose_allocator(env: dict[str, str]) -> bool:
    """True when the environment already decides: one of GLIBC_VARIABLES, a glibc malloc
    tunable (GLIBC_TUNABLES=glibc.malloc....), or another allocator preloaded (jemalloc,
    tcmalloc, mimalloc: glibc's mallopt would report success and change nothing)."""
    if any(name in env for name in GLIBC_VARIABLES):
        return True
    if "glibc.malloc." in env.get("GLIBC_TUNABLES", ""):
        return True
    preload = env.get("LD_PRELOAD", "").lower()
    return any(name in preload for name in ("jemalloc", "tcmalloc", "mimalloc"))


#: how many compiled products oneDNN keeps (its primitive cache; default 1,024), under
#: its current and its older name
ONEDNN_CACHE_VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY")
#: how many prepared products torch's oneDNN binding (ideep) keeps (default 1,024)
IDEEP_CACHE_VARIABLE = "LRU_CACHE_CAPACITY"
#: products kept by each cache when decoding
DECODING_PRIMITIVES = 32


def limit_onednn_cache(capacity: int = DECODING_PRIMITIVES) -> bool:
    """Keep at most `capacity` compiled products in oneDNN's cache and in torch's
    (ideep's), for a process that decodes: each keeps one per product shape, up to
    1,024, with its buffers, and a beam search makes new shapes all the time (a
    product's rows change whenever a sentence leaves the batch, an encoder's with every
    batch's length). fp32 translate of a 3,000-sentence document held some 200 MB in
    them (docs/benchmarks.md, "Issue 50"). A step's products still find theirs; a shape
    seen again later is compiled again (about 0.3 ms). Both are read when the first
    product is made: call this before any fp32 product. True when it set one; a
    variable the environment already sets is left as it is."""
    changed = False
    if not any(name in os.environ for name in ONEDNN_CACHE_VARIABLES):
        os.environ[ONEDNN_CACHE_VARIABLES[0]] = str(capacity)
        changed = True
    if IDEEP_CACHE_VARIABLE not in os.environ:
        os.environ[IDEEP_CACHE_VARIABLE] = str(capacity)
        changed = True
    return changed


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's mmap threshold to MMAP_THRESHOLD and its trim threshold to
    TRIM_THRESHOLD for this process (once). True when set; False, changing nothing, where
    the C library is not glibc or the environment already chose (_user_chose_allocator)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    if _user_chose_allocator(dict(os.environ)):
        return False
    # the mmap threshold first, as it fixes both thresholds (glibc stops adapting them
    # once either is set)
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def mallopt(param: int, value: int) -> bool:
    """glibc's mallopt(param, value): True on success, False where it fails or the C
    library has none. Callers check for glibc first (keep_freed_memory)."""
    try:
        call = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    call.argtypes, call.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return call(param, value) == 1
