"""`python bench/hook_runner.py {with,without} CLIENT EVENT`: one hook call, as the console script
makes it, with or without the redaction of secrets by their shape (security/secret_shapes.py).

bench/hook_latency.py spawns this for both variants in the same run, so the ratio between them is
the detector's cost on the hook path and nothing else (same interpreter, same entry point).
"""

from __future__ import annotations

import sys

from context_kernel.cli import main
from context_kernel.security import secret_shapes

if __name__ == "__main__":
    variant, *argv = sys.argv[1:]
    if variant == "without":
        # Key-based redaction stays; no detect-secrets patterns are read and no shape is looked for.
        secret_shapes.cached_shapes = lambda cache_dir: secret_shapes.SecretShapes([])  # type: ignore[assignment]
        secret_shapes.SecretShapes.redact = lambda self, text: text  # type: ignore[method-assign]
    sys.exit(main(["hook", *argv]))
