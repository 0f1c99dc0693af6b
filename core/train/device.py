"""Device choice and mixed precision: CUDA when present, else the CPU."""
from __future__ import annotations

import contextlib
import functools
import os
import platform

import torch

from core import limits
from core.config import DEVICE_RE
from core.errors import ConfigError, TrainingError


def pick_device(name: str = "auto", threads: int = 0, option: str = "device") -> torch.device:
    """'auto' -> cuda when available else cpu; a name that is not auto, cpu, cuda or
    cuda:N (train's rule, core.config.DEVICE_RE) and 'cuda' without a GPU are a
    ConfigError naming `option` ('--device' from the command line, see check_device)."""
    if not DEVICE_RE.match(str(name)):
        raise ConfigError(f"{option} must be auto, cpu, cuda or cuda:N, not {name!r}")
    if threads > 0:
        check_threads(threads)
        torch.set_num_threads(threads)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "mps" and not (torch.backends.mps.is_built()
                                     and torch.backends.mps.is_available()):
        raise ConfigError(f"{option} {name!r}: this machine has no Apple GPU (MPS) that torch "
                          "can use; use cpu, cuda or auto")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for, but no CUDA GPU is visible; use --device cpu")
    if device.type == "cuda" and device.index is not None and (
            device.index >= torch.cuda.device_count()):
        raise ConfigError(f"{option} {name!r}: this machine has {torch.cuda.device_count()} "
                          "CUDA GPU(s), numbered from 0; pick one of them, or cuda / auto")
    return device


def check_threads(threads: int, option: str = "train.threads (--threads)") -> None:
    """ConfigError when `threads` CPU threads exceed what this machine has
    (core.limits.cpu_threads): each thread is an OS thread per pool, so 2,000 of them
    made training 20 times slower, and 100,000 failed inside torch."""
    most = limits.cpu_threads()
    if threads > most:
        raise ConfigError(f"{option} = {threads:,} is more than the {most} CPU threads this "
                          f"machine has (the limit); give at most {most}, or 0 for torch's "
                          "default")


def check_device(name: str) -> torch.device:
    """A command's --device checked before any work (translate, evaluate, align, bench):
    the device, or the ConfigError of pick_device naming --device."""
    return pick_device(name, option="--device")


#: the least memory one parameter takes in training: its fp32 weight and its gradient
#: (an optimizer's moments come on top; the whole estimate: core.train.footprint)
TRAIN_BYTES_PER_PARAM = 8
_GIB = 1024 ** 3


def device_memory_bytes(device: torch.device) -> int | None:
    """The memory of `device`: the GPU's, or the machine's RAM; None when unknown."""
    if device.type == "cuda":
        try:
            return torch.cuda.get_device_properties(device).total_memory
        except (AssertionError, RuntimeError):  # no such GPU: pick_device says so first
            return None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def model_too_large(params: int, device: torch.device, asked: int | None = None,
                    memory: int | None = None) -> TrainingError:
    """The error for a model that does not fit: its size, the memory asked for, the
    device's memory and what to do."""
    need = (f"memory for {asked / _GIB:,.1f} GiB at once could not be had" if asked else
            f"training needs at least {params * TRAIN_BYTES_PER_PARAM / _GIB:,.1f} GiB")
    where = "GPU" if device.type == "cuda" else "machine"
    has = f" (this {where} has {memory / _GIB:,.1f} GiB)" if memory else ""
    return TrainingError(
        f"the model is too large to train here: {params:,} parameters, {need}{has}; lower "
        "the model's sizes (model.hidden_size, model.emb_size or model.d_model, the layers) "
        "or the vocabulary sizes")


def describe_device(device: torch.device | None = None) -> str:
    """Human-readable: 'NVIDIA H100 (cuda:0)' or 'CPU, 2 threads'."""
    device = device or pick_device("auto")
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({device})"
    return f"CPU, {torch.get_num_threads()} threads"


#: torch's CPU kernel levels that include AVX-512 (get_cpu_capability(); AMX CPUs say AVX512)
_AVX512_LEVELS = ("AVX512",)


def _probe_bf16_training() -> str | None:
    """Run one tiny LSTM + linear training step in CPU bf16 autocast; None if it works,
    else the error. oneDNN refuses bf16 LSTM training primitives on CPUs (or ISA caps,
    ONEDNN_MAX_CPU_ISA) without native bf16, so flags alone are not proof."""
    try:
        # gradients on, whatever the caller's mode: the answer is cached for the process;
        # the global generator untouched, or the first bf16 run of a process (which asks
        # first, after seeding) would draw other initial weights and dropout masks than
        # the same run started again
        with torch.random.fork_rng(devices=[]), torch.inference_mode(False), torch.enable_grad():
            lstm, proj = torch.nn.LSTM(8, 8, batch_first=True), torch.nn.Linear(8, 4)
            x = torch.randn(2, 3, 8)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = proj(lstm(x)[0])
            out.float().sum().backward()
        return None
    except RuntimeError as e:
        return str(e).split(". ")[0].strip() or type(e).__name__


@functools.cache
def cpu_bf16_status() -> tuple[bool, str]:
    """(native, why): whether bf16 autocast can train recurrent models fast on this CPU.

    Native means all three: the CPU has bf16 instructions (AVX512-BF16 or AMX), torch
    dispatches AVX-512 kernels (ATEN_CPU_CAPABILITY may lower it), and a bf16 LSTM
    training step really runs (see _probe_bf16_training). Elsewhere oneDNN either
    emulates bf16 several times slower than fp32 or refuses the LSTM primitive outright.
    `why` is a short phrase for logs: 'AVX512-BF16', 'no AVX512-BF16/AMX instructions', ...
    """
    try:
        flags = bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except (AttributeError, RuntimeError):
        flags = False
    if not flags:
        return False, "no AVX512-BF16/AMX instructions"
    level = torch.backends.cpu.get_cpu_capability()
    if level not in _AVX512_LEVELS:
        return False, f"torch's CPU kernels are {level}, not AVX-512"
    error = _probe_bf16_training()
    if error is not None:
        return False, f"a bf16 LSTM training step fails here ({error})"
    return True, "AMX" if torch.cpu._is_amx_tile_supported() else "AVX512-BF16"


def cpu_supports_bf16() -> bool:
    """True when this CPU trains in bf16 natively (see cpu_bf16_status)."""
    return cpu_bf16_status()[0]


def amp_active(device: torch.device, enabled: bool) -> bool:
    """Whether `train.amp` really runs in bf16 on `device`: always on CUDA, on a CPU
    only with native bf16 support (see cpu_bf16_status)."""
    return enabled and (device.type == "cuda" or cpu_supports_bf16())


def amp_message(device: torch.device) -> str:
    """The log line for `train.amp` on `device`: bf16, or why it falls back to fp32."""
    if amp_active(device, True):
        return "train.amp: bf16 autocast"
    return (f"train.amp: {device} has no native bf16 ({cpu_bf16_status()[1]}); "
            "training in fp32")


def precision_note(device_name: str, amp: bool) -> str:
    """What a run with `--device device_name` and `train.amp = amp` will compute in,
    for forms: 'fp32', 'bf16 autocast', or 'fp32: this CPU has no native bf16 (why)'."""
    try:
        device = pick_device(device_name)
    except ConfigError as e:
        return str(e)
    if not amp:
        return "fp32"
    if amp_active(device, True):
        return "bf16 autocast"
    return f"fp32: this CPU has no native bf16 ({cpu_bf16_status()[1]})"


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast (CUDA, or a CPU with native bf16) when enabled and possible; a
    no-op context otherwise, so no caller can reach oneDNN's bf16 primitives on a CPU
    that lacks them. The output softmax and the loss stay fp32 (the softmax layer's
    logits are cast, see core/train/loss.py); attention softmaxes run in bf16."""
    if amp_active(device, enabled):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def cpu_name(cpuinfo: str, default: str) -> str:
    """The processor as /proc/cpuinfo's text names it: its model name, and its family and
    model numbers where given, e.g. 'AMD EPYC (family 25, model 17)'. A virtual machine
    may show only 'AMD EPYC'; the numbers still tell a Zen 4 (family 25), which runs
    AVX-512 on 256-bit units (about 190 fp32 GFLOP/s on 2 cores here), from a CPU that
    runs it at full width (about 470 on earlier hosts; a Zen 5 is family 26). `default`
    where no model name is given."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if fields:  # the first processor's block has ended
                break
            continue
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name", default)
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def machine_summary() -> str:
    """One line naming this machine for CI logs and benchmark headers, e.g.
    'machine: AMD EPYC (family 25, model 17), 2 cores, torch CPU kernels AVX512, bf16
    native (AVX512-BF16), torch 2.13.0+cpu, Python 3.11.7, x86_64'."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = cpu_name(f.read(), model)
    except OSError:
        pass
    native, why = cpu_bf16_status()
    gpu = (f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ", no GPU")
    return (f"machine: {model}, {os.cpu_count()} cores, torch CPU kernels "
            f"{torch.backends.cpu.get_cpu_capability()}, bf16 "
            f"{'native' if native else 'not native'} ({why}), torch {torch.__version__}, "
            f"Python {platform.python_version()}, {platform.machine()}{gpu}")
