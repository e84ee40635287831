"""The compute dtype of every model run (``--dtype``): one decision, used by scoring, training, beams and difficulty.

``fp32`` runs in plain float32. ``bf16`` runs the model's matrix products under bfloat16 *autocast*:
the weights stay float32 (so training keeps fp32 master weights and its optimizer state in fp32), and
log-softmax and the summed log-probabilities are computed in fp32 by :mod:`lsplits.lm.scoring`.
``auto`` is bf16 where the hardware has fast bf16 and it pays off for the model's size, fp32 elsewhere:

- a CUDA GPU that supports bf16: bf16;
- a CPU with AMX-bf16 or AVX-512-BF16 (``/proc/cpuinfo`` flags): bf16 for models of at least
  :data:`CPU_BF16_MIN_PARAMETERS` parameters; below that, casting each layer's inputs costs more than
  the bf16 matrix products save (measured by ``benchmarks/dtype.py``), so fp32;
- anything else: fp32.

The hardware facts are arguments (``cpu_flags``, ``cuda_bf16``) so that tests can inject them.

>>> resolve_dtype("auto", "cpu", n_parameters=400_000_000, cpu_flags={"avx512f"})
'fp32'
>>> resolve_dtype("auto", "cpu", n_parameters=400_000_000, cpu_flags={"amx_bf16", "avx512_bf16"})
'bf16'
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from lsplits.errors import ConfigError, InvalidOption
from lsplits.params import DTYPES, check_choice

logger = logging.getLogger(__name__)

AUTO, FP32, BF16 = DTYPES
DEFAULT_DTYPE = AUTO
"""What ``--dtype`` and every API entry point use unless told otherwise."""
CPU_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
"""CPU flags (``/proc/cpuinfo``) of hardware bf16 matrix units: with either, bf16 autocast is fast on the CPU."""
CPU_BF16_MIN_PARAMETERS = 20_000_000
"""Smallest model (parameters, embeddings included) for which ``auto`` picks bf16 on a CPU.

Measured by ``benchmarks/dtype.py`` on this project's AMX CPU (2 cores), speed-up of bf16 over fp32. Two runs
on cores shared with other jobs, scoring: 0.7M parameters 0.43x / 1.03x, 3.7M 0.96x / 0.78x, 11.5M 1.48x /
1.04x, 20M 2.18x / 1.08x, 58M 1.78x / 1.69x, 87M 1.97x / 1.76x. On a quiet machine, scoring: 0.7M 1.42x /
1.29x, 3.7M 1.96x / 2.03x, 11.5M 2.55x / 2.69x, 20M 2.85x / 2.76x, 58M 3.25x / 3.47x, 87M 3.39x / 3.40x,
gpt2-medium size 3.24x / 3.58x; fine-tuning: the scratch LM (0.7M) 0.90x / 1.00x, gpt2-medium size 1.31x /
1.83x (the second with fused AdamW). Below 20M bf16 lost in some run (and never fine-tunes the scratch LM
faster); from 20M on it never lost.
"""


def dtype_text(dtype: str) -> str:
    """How the card says a resolved dtype: ``bf16 autocast (fp32 weights and log-softmax)`` or ``fp32``."""
    return "bf16 autocast (fp32 weights, log-softmax and sums)" if dtype == BF16 else "fp32"


def check_dtype(dtype: str, option: str = "dtype") -> str:
    """``dtype`` if it is one of :data:`DTYPES`, else InvalidOption naming ``option`` (``dtype``; the CLI says
    ``--dtype``)."""
    try:
        return check_choice("dtype", dtype, DTYPES)
    except InvalidOption as exc:
        raise exc.renamed(option) from None


@functools.cache
def host_cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The flags of this machine's CPU (empty where ``/proc/cpuinfo`` does not exist, e.g. macOS)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def cpu_has_bf16(cpu_flags: Collection[str] | None = None) -> bool:
    """Whether the CPU (``cpu_flags``, default this machine's) has AMX-bf16 or AVX-512-BF16 units."""
    flags = host_cpu_flags() if cpu_flags is None else frozenset(cpu_flags)
    return bool(flags & CPU_BF16_FLAGS)


def _device_type(device: Any) -> str:
    return getattr(device, "type", None) or str(device).split(":")[0]


def resolve_dtype(dtype: str, device: Any, *, n_parameters: int | Callable[[], int] | None = None,
                  cpu_flags: Collection[str] | None = None, cuda_bf16: bool | None = None) -> str:
    """The dtype a run of a model of ``n_parameters`` on ``device`` computes in: ``"fp32"`` or ``"bf16"``.

    Args:
        dtype: ``"auto"``, ``"fp32"`` or ``"bf16"`` (what the user asked for).
        device: a torch.device or its name (``"cpu"``, ``"cuda:0"``).
        n_parameters: the model's size, or a function computing it (called only when the size decides);
            None (unknown) counts as large enough for bf16.
        cpu_flags: the CPU's flags (default: this machine's).
        cuda_bf16: whether the GPU supports bf16 (default: ask torch).

    Raises:
        ConfigError: an unknown ``dtype``, or ``bf16`` on a GPU without bf16 support.
    """
    check_dtype(dtype)
    kind = _device_type(device)
    if kind == "cuda":
        if cuda_bf16 is None:
            import torch

            cuda_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        if dtype == BF16 and not cuda_bf16:
            raise ConfigError("{opt:dtype} bf16: this GPU does not support bfloat16; use fp32 or auto")
        return BF16 if dtype == BF16 or (dtype == AUTO and cuda_bf16) else FP32
    if dtype != AUTO:
        if dtype == BF16 and kind == "cpu" and not cpu_has_bf16(cpu_flags):
            logger.warning("bf16 on a CPU without AMX or AVX-512-BF16: it runs, emulated, slower than fp32")
        return dtype
    if kind != "cpu" or not cpu_has_bf16(cpu_flags):
        return FP32
    if callable(n_parameters):
        n_parameters = n_parameters()
    return BF16 if n_parameters is None or n_parameters >= CPU_BF16_MIN_PARAMETERS else FP32


def count_parameters(model: Any) -> int:
    """Parameters of a torch module, each tied tensor counted once."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def config_parameters(config: Any) -> int:
    """Parameters of the model a Hugging Face config (or a Hub id / model folder) describes, built on the
    meta device: no weights are read or allocated. Its base model is counted (a tied LM head adds nothing)."""
    import torch
    from transformers import AutoConfig, AutoModel

    if isinstance(config, (str, Path)):
        config = AutoConfig.from_pretrained(str(config))
    with torch.device("meta"):
        model = AutoModel.from_config(config)
    return count_parameters(model)


def unloaded_model_dtype(dtype: str, model: str, device: Any = None) -> str:
    """:func:`resolve_dtype` for a model not loaded yet (Hub id or folder; sized from its config only when it
    matters) on ``device`` (None: CUDA when available, else the CPU), to key caches before any weights load."""
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    return resolve_dtype(dtype, device, n_parameters=lambda: config_parameters(model))


def model_dtype(dtype: str, model: Any, device: Any = None) -> str:
    """:func:`resolve_dtype` for a loaded ``model`` on ``device`` (default: where its weights are)."""
    if device is None:
        device = next(model.parameters()).device
    return resolve_dtype(dtype, device, n_parameters=count_parameters(model))


def autocast(dtype: str, device: Any) -> contextlib.AbstractContextManager:
    """bf16 autocast on ``device`` for a resolved ``dtype`` of ``"bf16"``; nothing (plain fp32) for ``"fp32"``."""
    if dtype == BF16:
        import torch

        return torch.autocast(_device_type(device), dtype=torch.bfloat16)
    if dtype != FP32:
        raise ConfigError(f"autocast needs a resolved dtype (fp32 or bf16), got {dtype!r}")
    return contextlib.nullcontext()
