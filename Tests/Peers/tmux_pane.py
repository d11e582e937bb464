#!/usr/bin/env python3
"""Runs a command in a detached tmux pane of 100 x 20 and prints what the pane showed, as JSON:
{"during": [lines when WAIT_FOR first appeared], "after": [lines when the command had ended]}.

    python3 tmux_pane.py TMUX WAIT_FOR COMMAND...

The command runs in the pane's shell as `COMMAND; echo EXIT=$?`. Signals are unblocked first: a parent such as a
Swift test process hands its children a mask that blocks nearly all of them, and a tmux client then waits forever
for its new server. Gives up after 30 s; the tmux server is always killed.
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

signal.pthread_sigmask(signal.SIG_SETMASK, [])
tmux, wait_for, command = sys.argv[1], sys.argv[2], sys.argv[3:]
socket = f"streaming-multipart-{os.getpid()}"
quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
shell = " ".join(shlex.quote(word) for word in command) + "; echo EXIT=$?; sleep 60"


def pane():
    result = subprocess.run([tmux, "-L", socket, "capture-pane", "-p", "-t", "0"], capture_output=True,
                            stdin=subprocess.DEVNULL)
    return result.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")


def wait(text):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = pane()
        if any(text in line for line in lines):
            return lines
        time.sleep(0.1)
    return pane()


try:
    subprocess.run([tmux, "-L", socket, "new-session", "-d", "-x", "100", "-y", "20", shell], check=True, **quiet)
    during = wait(wait_for)
    after = wait("EXIT=")
    print(json.dumps({"during": during, "after": [line for line in after if line.strip()]}))
finally:
    subprocess.run([tmux, "-L", socket, "kill-server"], **quiet)
