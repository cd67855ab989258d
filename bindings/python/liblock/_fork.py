"""This process's id and the check that a client is used in the process it was made in
(a forked child cannot use its parent's connections, locks or Go runtime). Below the host
and the client's driver, which both check."""

from __future__ import annotations

import os

from ._errors import ForkedProcessError

# what an operation on a closed client's host raises (InvalidHandle)
CLOSED_MESSAGE = "liblock: invalid handle: the client was closed"

# This process's id, renewed in a forked child by an at-fork hook: check_fork runs a few
# times per operation, and os.getpid() is a system call each time (glibc caches no pid).
# A fork that skips Python's at-fork hooks (a C library's raw fork()) leaves an interpreter
# that is not safe to use anyway; liblock.so's own fork guard (_native.forked) relies on the
# same hook.
_pid = os.getpid()


def _forked_child() -> None:
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def check_fork(pid: int) -> None:
    """Raise ForkedProcessError in a process forked from the one (``pid``) a client was made in."""
    if _pid != pid:
        raise ForkedProcessError(
            f"this liblock client was created in process {pid}; process {os.getpid()} is a fork of "
            "it and cannot use it: its connections and locks (and liblock.so's Go runtime, which "
            "does not survive fork()) belong to the parent. Create a new liblock.Client in the "
            "child: with backend=\"wasm\" always (liblock.wasm has no Go runtime to lose), on the "
            "native backend only if liblock.so was not loaded before the fork; or use "
            "multiprocessing's 'spawn' or 'forkserver' start method.")
