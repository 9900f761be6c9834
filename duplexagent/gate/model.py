"""The gate network, its file format and its fast single-turn inference.

A hashed bag of features (:mod:`duplexagent.gate.features`) goes through one sum-pooled
embedding table (16,384 buckets x 32), a ReLU, and a linear layer to the five actions; the
softmax of the logits divided by a fitted temperature is the confidence. The file is a plain
``torch.save`` of tensors, numbers and strings, so it loads with ``weights_only=True``.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexagent.gate.features import FEATURES, N_BUCKETS, GateInput, featurize
from simulator.atomic import atomic_write

__all__ = ["ACTIONS", "FORMAT", "GateModelError", "LearnedGate", "build_net", "load_gate", "save_gate", "DEFAULT_WEIGHTS"]

ACTIONS = ("LISTEN", "RESPOND", "DELEGATE", "CONTROL", "IGNORE")
FORMAT = "duplexagent-gate/2"
HIDDEN = 32
DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "gate.pt"


class GateModelError(ValueError):
    """A gate file that cannot be used (missing, wrong format, wrong shapes)."""


def build_net(n_buckets: int = N_BUCKETS, hidden: int = HIDDEN) -> Any:
    """The torch module that training fits (imported lazily: torch is heavy)."""
    import torch
    from torch import nn

    class GateNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.EmbeddingBag(n_buckets, hidden, mode="sum")
            self.b1 = nn.Parameter(torch.zeros(hidden))
            self.out = nn.Linear(hidden, len(ACTIONS))
            nn.init.normal_(self.emb.weight, std=0.02)

        def forward(self, idx: "torch.Tensor", offsets: "torch.Tensor") -> "torch.Tensor":
            h = torch.relu(self.emb(idx, offsets) + self.b1)
            return self.out(h)

    return GateNet()


def save_gate(path: str | Path, net: Any, temperature: float, recipe: dict[str, Any], metrics: dict[str, Any]) -> bytes:
    """Write the gate file atomically; returns its bytes (same weights and recipe, same bytes)."""
    import torch

    state = {k: v.detach().clone().contiguous() for k, v in net.state_dict().items()}
    doc = {
        "format": FORMAT,
        "actions": list(ACTIONS),
        "n_buckets": int(state["emb.weight"].shape[0]),
        "hidden": int(state["emb.weight"].shape[1]),
        "features": FEATURES,
        "temperature": float(temperature),
        "recipe": recipe,
        "metrics": metrics,
        "state": state,
    }
    buf = io.BytesIO()
    torch.save(doc, buf)  # to a buffer: the archive's inner name never depends on the file name
    data = buf.getvalue()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, data)
    return data


@dataclass
class LearnedGate:
    """A trained gate ready for inference: ``predict(GateInput) -> (action, confidence)``."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    temperature: float
    recipe: dict[str, Any]
    metrics: dict[str, Any]
    digest: str
    path: str

    def probabilities(self, x: GateInput) -> np.ndarray:
        idx = featurize(x)
        h = self.w1[idx].sum(axis=0) + self.b1
        np.maximum(h, 0.0, out=h)
        z = (h @ self.w2 + self.b2) / self.temperature
        z = z - z.max()
        p = np.exp(z)
        return p / p.sum()

    def predict(self, x: GateInput) -> tuple[str, float]:
        p = self.probabilities(x)
        k = int(p.argmax())
        return ACTIONS[k], round(float(p[k]), 3)

    def describe(self) -> dict[str, Any]:
        return {"mode": "learned", "model": Path(self.path).name, "sha256": self.digest[:16]}


def _array(t: Any) -> np.ndarray:
    """A tensor's values as a numpy array (``_read_plain`` gives arrays already)."""
    return t if isinstance(t, np.ndarray) else t.numpy()


_PLAIN_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "LongStorage": np.int64, "IntStorage": np.int32}


def _read_plain(raw: bytes) -> dict[str, Any] | None:
    """A ``torch.save`` file of plain data and CPU tensors (what ``save_gate`` writes), read without
    torch: the pickle inside the zip archive through an unpickler that knows only dicts and the
    tensor rebuild (as ``weights_only=True`` allows), each tensor a numpy array of the same values.
    None for anything else (an unknown type, another layout, a damaged archive): torch reads it."""
    import pickle
    import zipfile

    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        names = zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl")]
        if len(pkl) != 1:
            return None
        prefix = pkl[0][: -len("data.pkl")]
        if prefix + "byteorder" in names and zf.read(prefix + "byteorder") != b"little":
            return None
        storages: dict[str, np.ndarray] = {}

        def storage(key: str, dtype: Any, numel: int) -> np.ndarray:
            if key not in storages:
                data = np.frombuffer(zf.read(f"{prefix}data/{key}"), dtype=dtype)
                if data.size < numel:
                    raise ValueError("short storage")
                storages[key] = data
            return storages[key]

        def rebuild(st: Any, offset: int, size: tuple, stride: tuple, requires_grad: bool = False, hooks: Any = None, metadata: Any = None) -> np.ndarray:
            if hooks or metadata:
                raise ValueError("tensor extras")
            item = st.itemsize
            if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
                raise ValueError("tensor layout")
            if all(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= st.size:
                raise ValueError("tensor out of its storage")
            return np.lib.stride_tricks.as_strided(st[offset:], shape=tuple(size), strides=tuple(s * item for s in stride)).copy()

        class Storage:
            def __init__(self, dtype: Any) -> None:
                self.dtype = dtype

        class Reader(pickle.Unpickler):
            def find_class(self, module: str, name: str) -> Any:
                if (module, name) == ("collections", "OrderedDict"):
                    import collections

                    return collections.OrderedDict
                if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
                    return rebuild
                if module == "torch" and name in _PLAIN_DTYPES:
                    return Storage(_PLAIN_DTYPES[name])
                raise ValueError(f"{module}.{name}")

            def persistent_load(self, pid: Any) -> Any:
                if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], Storage) and pid[3] == "cpu"):
                    raise ValueError("storage")
                return storage(str(pid[2]), pid[1].dtype, int(pid[4]))

        doc = Reader(io.BytesIO(zf.read(pkl[0]))).load()
    except Exception:
        return None
    return doc if isinstance(doc, dict) else None


def load_gate(path: str | Path | None = None) -> LearnedGate:
    """Load a gate file (default: the weights shipped with the package) with ``weights_only=True``
    (a file as ``save_gate`` writes it is read by :func:`_read_plain`, without torch)."""

    p = Path(path) if path is not None else DEFAULT_WEIGHTS
    try:
        raw = p.read_bytes()
    except OSError as err:
        raise GateModelError(f"{p}: cannot read gate file: {err.strerror}") from None
    doc = _read_plain(raw)  # the common case, without importing torch (about a second)
    if doc is None:
        import torch

        try:
            doc = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        except Exception as err:  # a truncated or foreign file, or one holding more than tensors
            raise GateModelError(f"{p}: not a gate file (torch.load with weights_only=True failed: {type(err).__name__})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GateModelError(f"{p}: format: expected {FORMAT!r}, got {doc.get('format') if isinstance(doc, dict) else type(doc).__name__!r}")
    if doc.get("features") != FEATURES:
        raise GateModelError(f"{p}: features: expected {FEATURES!r}, got {doc.get('features')!r} (retrain with `duplexagent gate train`)")
    if tuple(doc.get("actions", ())) != ACTIONS:
        raise GateModelError(f"{p}: actions: expected {list(ACTIONS)}, got {doc.get('actions')}")
    st = doc["state"]
    try:
        w1 = _array(st["emb.weight"]).astype(np.float32)
        b1 = _array(st["b1"]).astype(np.float32)
        w2 = _array(st["out.weight"]).T.astype(np.float32).copy()
        b2 = _array(st["out.bias"]).astype(np.float32)
    except KeyError as err:
        raise GateModelError(f"{p}: state: missing tensor {err}") from None
    if w1.shape[0] != N_BUCKETS or w2.shape != (w1.shape[1], len(ACTIONS)):
        raise GateModelError(f"{p}: state: shapes {w1.shape} / {w2.shape} do not match {N_BUCKETS} buckets and {len(ACTIONS)} actions")
    t = float(doc.get("temperature", 1.0))
    if not t > 0:
        raise GateModelError(f"{p}: temperature: must be > 0, got {t}")
    return LearnedGate(w1, b1, w2, b2, t, dict(doc.get("recipe", {})), dict(doc.get("metrics", {})), hashlib.sha256(raw).hexdigest(), str(p))
