"""The security package is imported on the hook path: standard library only."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("sqlalchemy", "anyio", "mcp", "httpx", "jupyter_client", "pathspec")


def test_importing_the_security_modules_pulls_in_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import context_kernel.security.deny, context_kernel.security.escapes, context_kernel.security.redact\n"
        "from context_kernel.security import DenyRules\n"
        "DenyRules.from_strings(['Bash(rm -rf *)']).check_code('python', 'import os; os.system(\"ls\")')\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""
