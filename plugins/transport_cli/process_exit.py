"""Ending a one-shot ``echo-memory`` process without the interpreter's teardown.

After a command has answered, the interpreter's own shutdown would tear down every
module and free every object the command made (3-4 ms of a ~100 ms cold recall at 100k
notes, measured with ``os._exit`` against ``sys.exit``) only for the system to take the
memory back anyway. ``exit_now`` does what that shutdown does that anyone can see, in
its order: waits for the threads that are not daemons, runs the ``atexit`` handlers
(``weakref.finalize`` callbacks among them), flushes stdout and stderr; then it ends the
process with the status ``sys.exit`` would give. Only for a process of its own
(``app.main`` without ``argv``): code that runs the CLI in-process keeps its interpreter.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

__all__ = ["exit_now", "exit_status"]


def exit_status(code: object) -> int:
    """The process status of ``sys.exit(code)``: None is 0, an int itself, anything
    else (a message) 1, the message printed to stderr as the interpreter would."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        print(code, file=sys.stderr)
    except (OSError, ValueError):
        pass
    return 1


def exit_now(code: object) -> NoReturn:
    """End the process as ``sys.exit(code)`` would, without the interpreter's teardown
    (module docstring). A stream that cannot be flushed (a closed pipe) is left as it
    is: the status stays the command's."""
    status = exit_status(code)
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(status)
