"""Which process am I in a multi-process run, and the few collectives the LM code needs.

A plain ``lsplits`` / ``python`` run is a world of one process: every helper here is then a no-op
and torch.distributed is never started. Under ``accelerate launch`` or ``torchrun`` (``WORLD_SIZE``
above 1 in the environment) the process group is started through accelerate's ``PartialState``:
NCCL on GPUs, gloo on CPUs. accelerate only picks its multi-CPU (gloo) mode when asked for the CPU,
so it is asked whenever there is no GPU; otherwise every CPU process would think it is alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np
import torch


def launched() -> bool:
    """Whether this process is one of several started by a launcher (``WORLD_SIZE`` > 1)."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def use_cpu() -> bool:
    """Whether accelerate should be asked for the CPU: there is no GPU (see the module docstring)."""
    return not torch.cuda.is_available()


def process_state():
    """accelerate's ``PartialState`` (a singleton), started with :func:`use_cpu`; only under a launcher."""
    from accelerate import PartialState

    exit_with_launcher()
    return PartialState(cpu=use_cpu())


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


@functools.cache
def exit_with_launcher() -> None:
    """Make this process die when the process that started it (the launcher) dies.

    ``torchrun`` (which ``accelerate launch`` runs) starts each worker in a session of its own, so
    killing the launcher, or its whole process group, leaves the workers running and holding their
    memory. On Linux the kernel is asked to send SIGKILL when the parent goes (``PR_SET_PDEATHSIG``);
    elsewhere a daemon thread polls for the parent to change. Called once (cached), under a launcher,
    as early as possible (the CLI calls it right after parsing the options).
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                return
        except (OSError, AttributeError):  # no prctl in this libc: fall back to watching
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="lsplits-launcher-watch", daemon=True).start()


def rank() -> int:
    """This process's index, 0 when alone."""
    return process_state().process_index if launched() else 0


def world_size() -> int:
    """The number of processes, 1 when alone."""
    return process_state().num_processes if launched() else 1


def is_main() -> bool:
    """Whether this is the process that writes shared files (rank 0)."""
    return rank() == 0


def process_device() -> torch.device | None:
    """This process's device under a launcher (its own GPU), None when alone (the caller decides)."""
    return process_state().device if launched() else None


def barrier() -> None:
    """Wait until every process gets here."""
    if launched():
        process_state().wait_for_everyone()


@contextlib.contextmanager
def main_first() -> Iterator[None]:
    """Run the body on rank 0 first, then on the others (which then find what rank 0 wrote)."""
    if not launched():
        yield
        return
    with process_state().main_process_first():
        yield


def sum_over_processes(values: Sequence[float]) -> np.ndarray:
    """Element-wise float64 sum of ``values`` over all processes (``values`` itself when alone)."""
    array = np.asarray(values, dtype=np.float64)
    if not launched():
        return array
    tensor = torch.from_numpy(array.copy()).to(process_state().device)
    torch.distributed.all_reduce(tensor)
    return tensor.cpu().numpy()
