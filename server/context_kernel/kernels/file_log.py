"""Which files an R cell opened, for the record a reviewer reads: traced connections written to a log.

IRkernel evaluates no user expression (its execute_reply carries none), so the python way
(kernels/file_access.py) cannot bring the list back. Instead the setup traces R's connection
constructors (`file`, `gzfile`, `bzfile`, `xzfile`: `read.csv`, `readLines`, `write.csv`, `readRDS`,
`saveRDS` and `sink` open files through them) and the graphics devices that write files (`png`, `jpeg`,
`pdf`, `svg`, `bmp`, `tiff`: `ggsave` goes through them too). Each traced call appends one line, mode and
absolute path, to a log in the server's private runtime folder, through a connection opened before
tracing starts (so writing never re-enters the trace). After each cell the server reads what was added
since the last look. Out of sight: readers in C or C++ that open files themselves (readr/vroom,
data.table's `fread`, arrow), R's own library and temporary folders (IRkernel's plots pass through a
temporary PNG), system folders and hidden ones. Remote kernels (a gateway) are not traced: their files
are not the reviewer's.
"""

from __future__ import annotations

import json
from pathlib import Path

from .file_access import MAX_FILES

# Most of a line is a path; a log line longer than this is not one of ours.
MAX_LINE = 8192
# What one look reads at most: a cell that opened a million files keeps its first ones (the record is a
# trail, not an inventory) and the rest is skipped, not read into the server's memory.
MAX_READ = 4 * 1024 * 1024

R_SETUP = r'''
local({
  ck <- new.env()
  ck$con <- file(LOG_PATH, "a")
  ck$skip <- unique(c(normalizePath(c(R.home(), .libPaths(), tempdir()), mustWork = FALSE),
                      "/proc", "/sys", "/dev", "/usr", "/lib", "/etc", "/opt", "/run", "/snap", "/var/lib"))
  ck$note <- function(path, mode) {
    tryCatch({
      if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)
          || grepl("://", path, fixed = TRUE) || path %in% c("stdin", "stdout", "stderr", "clipboard")) {
        return(invisible())
      }
      p <- path.expand(path)
      if (!startsWith(p, "/")) p <- file.path(getwd(), p)
      if (any(startsWith(p, paste0(ck$skip, "/"))) || grepl("/.", p, fixed = TRUE)) return(invisible())
      writeLines(paste0(if (is.character(mode) && grepl("[wa+]", mode[1])) "w" else "r", "\t", p), ck$con)
      flush(ck$con)
    }, error = function(e) NULL)
    invisible()
  }
  # Reached through an option: any frame sees it, and `rm(list = ls())` in a cell does not remove it.
  options(.ck_file_log = ck)
  for (f in c("file", "gzfile", "bzfile", "xzfile")) {
    suppressMessages(trace(f, tracer = quote(ck_note(description, open)), print = FALSE,
                           where = baseenv()))
  }
  for (f in c("png", "jpeg", "bmp", "tiff", "pdf", "svg")) {
    arg <- if (f == "pdf") quote(file) else quote(filename)
    suppressMessages(trace(f, tracer = bquote(ck_note(.(arg), "w")), print = FALSE,
                           where = asNamespace("grDevices")))
    suppressMessages(trace(f, tracer = bquote(ck_note(.(arg), "w")), print = FALSE))
  }
})
'''


# What each traced call runs: nothing at all once the option is gone.
_NOTE = 'if (is.environment(getOption(".ck_file_log"))) getOption(".ck_file_log")$note'


def r_setup(log_path: Path) -> str:
    """The R setup cell that traces file access into `log_path`."""
    # A JSON string is a valid R string literal for any path (quotes, backslashes, non-ASCII escaped).
    return R_SETUP.replace("LOG_PATH", json.dumps(str(log_path))).replace("ck_note", _NOTE)


class FileLog:
    """The server's side of the log: what one kernel's cells added to it since the last look."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def skip_to_end(self) -> None:
        """Forget what is there (setup's own reads, a background cell's): the next look starts now."""
        try:
            self._offset = self.path.stat().st_size
        except OSError:
            self._offset = 0

    def since_last(self) -> dict[str, str]:
        """{absolute path: "r" or "w"} of the lines added since the last look ("w" wins over "r")."""
        try:
            with self.path.open("rb") as f:
                size = f.seek(0, 2)
                f.seek(self._offset)
                data = f.read(MAX_READ)
        except OSError:
            return {}
        # Only whole lines: a line being written stays for the next look (unless the look was cut short).
        end = data.rfind(b"\n") + 1
        self._offset = size if len(data) >= MAX_READ else self._offset + end
        found: dict[str, str] = {}
        for raw in data[:end].splitlines():
            mode, _, path = raw.decode("utf-8", "replace").partition("\t")
            if mode not in ("r", "w") or not path.startswith("/") or len(raw) > MAX_LINE:
                continue
            if len(found) >= MAX_FILES and path not in found:
                break
            found[path] = "w" if mode == "w" or found.get(path) == "w" else "r"
        return found
