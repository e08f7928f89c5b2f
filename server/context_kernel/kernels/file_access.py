"""Which files a python cell opened, for the record a reviewer reads: an audit hook in the kernel.

`sys.addaudithook` sees every `open` (built-in `open`, `io.open`, `os.open`: pandas' `read_csv`, numpy's
`loadtxt`, matplotlib's `savefig`), not native readers that bypass Python's I/O (pyarrow's engine, `mmap` of
an already open file). The hook keeps the data files of one cell, read or written: not the interpreter's
own (its prefixes, site-packages, system folders), not hidden folders (`.venv`, `~/.cache`, `.ipython`),
not compiled modules. IPython's `pre_run_cell` starts each cell's list afresh; the list comes back with the
cell's execute_reply as a user expression, so a cell that succeeded costs no extra round trip (ipykernel
skips user expressions after an error: then one silent request reads them).
"""

from __future__ import annotations

import ast
import json
from typing import Any

# The name under which the execute_reply carries the list.
EXPRESSION_KEY = "context_kernel_files"
EXPRESSION = "__import__('sys')._ck_files()"
# A cell that opens thousands of files (a directory of CSVs) keeps the first ones: the record is a trail,
# not an inventory.
MAX_FILES = 200

SETUP = r'''
def _ck_setup_file_access():
    import json, os, sys
    skip = tuple({os.path.join(os.path.realpath(p), "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
                 | {"/proc/", "/sys/", "/dev/", "/usr/", "/lib/", "/lib64/", "/etc/", "/opt/", "/run/", "/snap/",
                    "/bin/", "/sbin/", "/var/lib/", "/var/cache/"})
    seen = {}
    limit = LIMIT

    def hook(event, args):
        if event != "open" or len(seen) >= limit:
            return
        try:
            path, mode, flags = args
            if not isinstance(path, (str, bytes, os.PathLike)):
                return
            path = os.path.abspath(os.fsdecode(path))
            if (path.startswith(skip) or "/." in path or "/__pycache__/" in path or "site-packages" in path
                    or path.endswith((".pyc", ".so", ".pth", ".py"))):
                return
            if isinstance(mode, str):
                writes = any(c in mode for c in "wax+")
            else:
                writes = bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND))
            seen[path] = "w" if writes or seen.get(path) == "w" else "r"
        except Exception:
            pass  # an audit hook must never break the code it watches

    def start_cell(*_args):
        seen.clear()

    sys.addaudithook(hook)
    get_ipython().events.register("pre_run_cell", start_cell)
    sys._ck_files = lambda: json.dumps(seen)

_ck_setup_file_access()
del _ck_setup_file_access
'''.replace("LIMIT", str(MAX_FILES))


def files_from_reply(content: dict[str, Any]) -> dict[str, str] | None:
    """{absolute path: "r" or "w"} from an execute_reply's user expressions; None when it holds none."""
    found = (content.get("user_expressions") or {}).get(EXPRESSION_KEY)
    if not isinstance(found, dict) or found.get("status") != "ok":
        return None
    try:
        value = json.loads(ast.literal_eval(found["data"]["text/plain"]))
    except (KeyError, ValueError, SyntaxError, TypeError):
        return None
    return {str(k): "w" if v == "w" else "r" for k, v in value.items()} if isinstance(value, dict) else None
