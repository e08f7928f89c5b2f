"""Per-kernel fixes applied right after a kernel starts, so every kernel behaves the same to the runner.

ipykernel forwards output written at the file-descriptor level (subprocesses, os.system, C
extensions) from a pipe-reader thread. That thread can lag behind the end of the cell, so the
output would reach IOPub after `status: idle` and be lost to the reply (measured: 4 of 100
`subprocess.run(['echo', ...])` cells). The setup below adds a post-run hook that writes a
one-byte marker through the pipe and waits until the reader thread has forwarded it: everything
written before the marker is then published before the kernel goes idle.

ipykernel also batches stream output for 0.2 s regardless of size; the setup caps a message at
about 64 KB so the server's memory stays bounded during a print flood.
"""

from __future__ import annotations

from pathlib import Path

from .file_access import SETUP as FILE_ACCESS_SETUP
from .file_log import r_setup

IPYKERNEL_SETUP = r'''
def _ck_setup_fd_flush():
    import os, sys, threading
    marker = "\x1e"

    def flush_fd_output(*_args):
        # Wrap whatever `write` the stream has right now: IPython swaps an instance-level
        # `write` in and out around every cell, so a wrapper installed earlier does not last.
        for stream in (sys.stdout, sys.stderr):
            fd = getattr(stream, "_original_stdstream_fd", None)
            if not getattr(stream, "_should_watch", False) or fd is None:
                continue
            seen = threading.Event()
            current = stream.write

            def write(text, *args, **kwargs):
                if marker in text and not seen.is_set():
                    text = text.replace(marker, "", 1)
                    seen.set()
                    if not text:
                        return 0
                return current(text, *args, **kwargs)

            stream.write = write
            try:
                os.write(fd, marker.encode())
                seen.wait(0.5)
            finally:
                stream.write = current
            stream.flush()

    get_ipython().events.register("post_run_cell", flush_fd_output)

    # Bound the size of one stream message: ipykernel publishes buffered output every 0.2 s,
    # so a print flood would otherwise become messages of hundreds of MB each. Past 64 KB the
    # writer waits for the IO thread to publish (back-pressure instead of a giant message).
    from ipykernel.iostream import OutStream
    schedule = OutStream._schedule_flush

    def _schedule_flush(self):
        try:
            pending = sum(buf.tell() for buf in list(self._buffers.values()))
        except Exception:
            pending = 0
        thread = getattr(self.pub_thread, "thread", None)
        if pending > 65536 and thread is not None and thread.ident != threading.get_ident():
            self.flush()
        else:
            schedule(self)

    OutStream._schedule_flush = _schedule_flush

_ck_setup_fd_flush()
del _ck_setup_fd_flush
'''


def setup_code(argv: list[str], language: str = "", files_log: Path | None = None) -> str | None:
    """Code to run silently once after start, chosen by what the kernelspec launches and its language;
    `files_log`: where an R kernel on this machine logs the files its cells open (kernels/file_log.py), None
    for a remote one."""
    if tracks_files(argv):
        return IPYKERNEL_SETUP + FILE_ACCESS_SETUP
    if files_log is not None and logs_files(language):
        return r_setup(files_log)
    return None


def tracks_files(argv: list[str]) -> bool:
    """Whether the kernel's setup installs the file-access hook (kernels/file_access.py): ipykernel's does."""
    return any("ipykernel" in arg for arg in argv)


def logs_files(language: str) -> bool:
    """Whether the kernel's setup traces file access into a log (kernels/file_log.py): an R kernel's does
    (IRkernel, however its kernelspec launches it)."""
    return language.strip().lower() == "r"
