"""core.allocator: freed tensor memory is kept and reused (measured in page faults, in
fresh processes: tests/core/allocator_probe.py)."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "core" / "allocator_probe.py"

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc",
                                reason="mallopt is glibc's; elsewhere nothing is changed")


def probe(mode: str, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, str(PROBE), mode], capture_output=True, text=True,
                          env={**clean, **env}, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@glibc_only
def test_beam_search_steps_stop_faulting_once_freed_memory_is_kept():
    """A beam-search step frees and makes several 9.6 MB tensors (2,344 pages each):
    handed back to the kernel (glibc's initial thresholds, held fixed by the probe),
    every step faults them in again; kept, the steps after the warm-up fault almost
    never."""
    returned, kept = probe("default"), probe("keep")
    assert (returned["applied"], kept["applied"]) == (False, True)
    assert returned["faults_per_step"] > 500
    assert kept["faults_per_step"] < 50


@glibc_only
def test_a_users_own_glibc_setting_wins():
    assert probe("keep", MALLOC_TRIM_THRESHOLD_="1000000")["applied"] is False


def test_what_counts_as_the_users_choice():
    from core.allocator import _user_chose_allocator

    assert not _user_chose_allocator({"PATH": "/usr/bin", "GLIBC_TUNABLES": "glibc.cpu.x=1"})
    assert _user_chose_allocator({"MALLOC_TOP_PAD_": "0"})
    assert _user_chose_allocator({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"})
    assert _user_chose_allocator({"LD_PRELOAD": "/usr/lib/libjemalloc.so.2"})


def test_the_entry_point_applies_it_before_any_command():
    code = ("import main, core.allocator as a\n"
            "try:\n    main.main(['corpus', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(a.keep_freed_memory.cache_info().currsize)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == "1"


def test_decoding_keeps_fewer_onednn_primitives_unless_the_user_chose(monkeypatch):
    from core.allocator import DECODING_PRIMITIVES, limit_onednn_cache

    for name in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY",
                 "LRU_CACHE_CAPACITY"):
        monkeypatch.delenv(name, raising=False)
    assert limit_onednn_cache() is True
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == str(DECODING_PRIMITIVES) == "32"
    assert os.environ["LRU_CACHE_CAPACITY"] == "32"
    assert limit_onednn_cache() is False  # set: left as it is
    monkeypatch.setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "500")
    monkeypatch.delenv("LRU_CACHE_CAPACITY")
    assert limit_onednn_cache() is True
    assert (os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"], os.environ["LRU_CACHE_CAPACITY"]) \
        == ("500", "32")
    monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY")
    monkeypatch.setenv("DNNL_PRIMITIVE_CACHE_CAPACITY", "7")  # oneDNN's older name
    assert limit_onednn_cache() is False
    assert "ONEDNN_PRIMITIVE_CACHE_CAPACITY" not in os.environ


def test_translate_limits_the_cache_before_its_first_product():
    """In a fresh process: the capacity is set by the time `translate` loads a model
    (a missing run stops it right after), and a command that does not decode leaves
    oneDNN's default."""
    code = ("import os, main\n"
            "os.environ.pop('ONEDNN_PRIMITIVE_CACHE_CAPACITY', None)\n"
            "os.environ.pop('LRU_CACHE_CAPACITY', None)\n"
            "main.main(['--workspace', os.environ['WS'], 'corpus', 'list'])\n"
            "print('CACHE', os.environ.get('ONEDNN_PRIMITIVE_CACHE_CAPACITY'), "
            "os.environ.get('LRU_CACHE_CAPACITY'))\n"
            "main.main(['--workspace', os.environ['WS'], 'translate', '--run', 'x'])\n"
            "print('CACHE', os.environ.get('ONEDNN_PRIMITIVE_CACHE_CAPACITY'), "
            "os.environ.get('LRU_CACHE_CAPACITY'))\n")
    import tempfile

    with tempfile.TemporaryDirectory() as ws:
        env = {k: v for k, v in os.environ.items() if "CACHE_CAPACITY" not in k}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, timeout=120, env={**env, "WS": ws + "/w"})
    seen = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("CACHE ")]
    assert seen == [["None", "None"], ["32", "32"]], done.stderr
