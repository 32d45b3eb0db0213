"""The console script ends its process without the interpreter's teardown
(``process_exit.exit_now``), and nothing anyone sees changes: the status ``sys.exit``
would give, stdout and stderr flushed when piped, ``atexit`` handlers run, threads that
are not daemons finished first."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from plugins.transport_cli.process_exit import exit_status
from tests.conftest import REPO

#: The environment of a child whose stdout is block-buffered, as a user's is when piped.
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _child(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=REPO, timeout=timeout, env=BUFFERED)


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), (78, 78),
                                              ("a message", 1)])
def test_the_status_is_the_one_sys_exit_gives(code: object, status: int) -> None:
    assert exit_status(code) == status


def test_pending_output_atexit_handlers_and_threads_all_finish_before_the_exit() -> None:
    done = _child(
        "import atexit, sys, threading, time\n"
        "from plugins.transport_cli.process_exit import exit_now\n"
        "sys.stdout.write('x' * 100000)  # more than one buffer, not flushed\n"
        "sys.stderr.write('to stderr')\n"
        "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
        "exit_now(7)\n")
    assert done.returncode == 7
    assert done.stdout.startswith("x" * 100000) and done.stdout.endswith("thread done\n")
    assert done.stderr == "to stderratexit ran\n"


def test_a_thread_pool_nobody_shut_down_does_not_keep_the_process_alive() -> None:
    done = _child(
        "import concurrent.futures, time\n"
        "from plugins.transport_cli.process_exit import exit_now\n"
        "pool = concurrent.futures.ThreadPoolExecutor(2)\n"
        "pool.submit(time.sleep, 0.1).result()\n"
        "pool.submit(print, 'last task')\n"
        "exit_now(0)\n", timeout=20)
    assert done.returncode == 0 and done.stdout == "last task\n"


def test_a_message_exit_prints_it_and_exits_1() -> None:
    done = _child("from plugins.transport_cli.process_exit import exit_now\n"
                  "exit_now('stopped: no vault')\n")
    assert (done.returncode, done.stderr) == (1, "stopped: no vault\n")


def test_a_closed_pipe_keeps_the_commands_status_and_prints_no_traceback() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ("import sys, time\n"
         "from plugins.transport_cli.process_exit import exit_now\n"
         "time.sleep(0.3)\nsys.stdout.write('y' * 100)  # buffered: flushed at the exit\n"
         "exit_now(0)\n")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
        env=BUFFERED)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away (`| head`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and err == ""  # sys.exit: 120, "Exception ignored"


def test_the_console_script_answers_and_exits_as_main_does() -> None:
    ok = _child("import sys\nsys.argv = ['echo-memory', '--version']\n"
                "from plugins.transport_cli.app import run\nrun()\n")
    usage = _child("import sys\nsys.argv = ['echo-memory', 'no-such-verb']\n"
                   "from plugins.transport_cli.app import run\nrun()\n")
    assert ok.returncode == 0 and ok.stdout.strip()
    assert usage.returncode == 2 and "no-such-verb" in usage.stderr
