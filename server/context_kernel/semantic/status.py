"""Is semantic recall on, and if not, why: switched off, the extra not installed, or its files refused.

Importable without the extra (it imports none of it at module level): the app and doctor ask it
first, and only then build `SemanticRecall`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SemanticUnavailable
from .files import ModelFiles, install_hint, locate

SemanticState = Literal["on", "off", "missing", "broken"]
# What the extra brings (pyproject.toml's `semantic`); the model's own package is checked by `files`.
REQUIRED_MODULES = ("numpy", "tokenizers", "threadpoolctl")
# A transformer the user points CONTEXT_KERNEL_SEMANTIC_MODEL at also needs its runtime.
ONNX_MODULES = ("onnxruntime",)


@dataclass(frozen=True)
class SemanticStatus:
    state: SemanticState
    detail: str
    hint: str = ""
    files: ModelFiles | None = None


def probe(enabled: bool, model_dir: Path | None, *, verify: bool = False) -> SemanticStatus:
    """Decide once at start-up (and for doctor, `verify=True` also hashes the model files)."""
    if not enabled:
        return SemanticStatus("off", "switched off (CONTEXT_KERNEL_SEMANTIC=0): search works by words only",
                              hint="unset CONTEXT_KERNEL_SEMANTIC to turn it on")
    versions = []
    for name in REQUIRED_MODULES + (ONNX_MODULES if model_dir is not None else ()):
        try:
            module = importlib.import_module(name)
        except ImportError:
            extra = "semantic-transformer" if name in ONNX_MODULES else "semantic"
            return SemanticStatus("missing", f"not installed ({name} is missing): search works by words only",
                                  hint=install_hint(extra))
        versions.append(f"{name} {getattr(module, '__version__', '?')}")
    try:
        files = locate(model_dir)
        if verify:
            files.verify()
    except SemanticUnavailable as exc:
        return SemanticStatus("broken" if exc.state == "broken" else "missing", exc.message, hint=exc.hint)
    checked = ", sha256 verified" if verify and files.pinned else (", files not pinned (your directory)"
                                                                   if not files.pinned else "")
    return SemanticStatus("on", f"{files.name} ({files.onnx}{checked}); {', '.join(versions[1:])}", files=files)
