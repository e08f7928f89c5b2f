"""Security: Claude Code deny rules (shell commands, code in other languages, paths), secret
redaction before anything is stored, and the HTTP transport's bearer token (`http_token`).

Standard library only, because the hooks import it on every tool call (< 150 ms to answer):
no SQLAlchemy, anyio or mcp here, and a test keeps it so. detect-secrets is imported only to read
its plugins' patterns (once per version into the hooks' cache; once per server process).
"""

from context_kernel.security.deny import Denial, DenyRule, DenyRules, parse_rule
from context_kernel.security.redact import is_secret_key, redact_obj, redact_text, secret_env_values
from context_kernel.security.secret_shapes import REDACTED

__all__ = [
    "REDACTED", "Denial", "DenyRule", "DenyRules", "is_secret_key", "parse_rule", "redact_obj",
    "redact_text", "secret_env_values",
]
