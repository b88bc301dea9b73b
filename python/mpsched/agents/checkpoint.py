"""Policy checkpoints: safetensors weights plus a JSON description (read in Rust by
``crates/mpsched-policy``).

A checkpoint is two files with one stem: ``NAME.safetensors`` (float32 tensors, nothing
executable) and ``NAME.json``::

    {"format": "mpsched-policy/1", "algorithm": "edar", "variant": "edar-p",
     "weights": "NAME.safetensors", "sha256": "<of the weights file>",
     "tensors": {"lstm1.0.weight_ih": [40, 1], ...},
     "net": {...}, "obs": {...}, "train": {...}}

Loading checks everything before a tensor is used: the JSON fields, the weights' digest, that
the weights file is safetensors (pickle and ``torch.save`` files are refused, never opened
with an unpickler), and every tensor's name and shape against what the algorithm expects.
Every problem is a :class:`CheckpointError` with a one-line message naming the file and field.
Both files are written atomically: a failed save leaves no half-written checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Tuple, Union

import numpy as np

from .._atomic import write_file_atomic

FORMAT = "mpsched-policy/1"

PathLike = Union[str, Path]


class CheckpointError(ValueError):
    """A bad or missing checkpoint (one-line message naming the file and field)."""


def checkpoint_paths(path: PathLike) -> Tuple[Path, Path]:
    """(description, weights) of a checkpoint given by either file or by their common stem."""
    p = Path(path)
    if p.suffix == ".json":
        return p, p.with_suffix(".safetensors")
    if p.suffix == ".safetensors":
        return p.with_suffix(".json"), p
    return Path(str(p) + ".json"), Path(str(p) + ".safetensors")


def save_checkpoint(
    path: PathLike, tensors: Mapping[str, np.ndarray], meta: Mapping[str, Any]
) -> Tuple[Path, Path]:
    """Writes ``tensors`` (float32) and ``meta`` (plus format, digest and shapes); returns the paths."""
    from safetensors.numpy import save

    js, st = checkpoint_paths(path)
    arrays = {k: np.ascontiguousarray(np.asarray(v, dtype=np.float32)) for k, v in tensors.items()}
    blob = save(arrays, metadata={"format": FORMAT})
    desc = dict(meta)
    desc["format"] = FORMAT
    desc["weights"] = st.name
    desc["sha256"] = hashlib.sha256(blob).hexdigest()
    desc["tensors"] = {k: list(v.shape) for k, v in arrays.items()}
    st.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomic(st, blob)
    write_file_atomic(js, (json.dumps(desc, indent=2, sort_keys=True) + "\n").encode())
    return js, st


def _field(desc: Mapping[str, Any], dotted: str, typ: Any, where: Path) -> Any:
    cur: Any = desc
    for part in dotted.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            raise CheckpointError(f"{where}: missing field {dotted!r}")
        cur = cur[part]
    if typ is int and (isinstance(cur, bool) or not isinstance(cur, int)):
        raise CheckpointError(f"{where}: field {dotted!r}: expected an integer, got {cur!r}")
    if typ is not int and not isinstance(cur, typ):
        name = getattr(typ, "__name__", str(typ))
        raise CheckpointError(
            f"{where}: field {dotted!r}: expected {name}, got {type(cur).__name__}"
        )
    return cur


def get_field(desc: Mapping[str, Any], dotted: str, typ: Any, where: Path) -> Any:
    """A field of the description (``"net.lstm1_units"``), type-checked; CheckpointError if not."""
    return _field(desc, dotted, typ, where)


def _check_safetensors_bytes(blob: bytes, where: Path) -> None:
    if blob[:1] == b"\x80" or blob[:2] == b"PK":
        raise CheckpointError(
            f"{where}: a pickle or torch.save file, not safetensors (mpsched never loads pickle)"
        )
    if len(blob) < 8:
        raise CheckpointError(f"{where}: not a safetensors file (too short)")
    n = int.from_bytes(blob[:8], "little")
    if n <= 0 or 8 + n > len(blob) or blob[8:9] != b"{":
        raise CheckpointError(f"{where}: not a safetensors file (bad header)")


def load_checkpoint(
    path: PathLike,
    algorithm: str,
    expected_shapes: Callable[[Dict[str, Any], Path], Dict[str, List[int]]],
) -> Tuple[Dict[str, Any], Dict[str, np.ndarray], Path, Path]:
    """Reads and validates a checkpoint; returns (description, tensors, json path, weights path).

    ``expected_shapes(description, json_path)`` gives every tensor's shape for the network the
    description declares (and raises CheckpointError on bad network fields).
    """
    from safetensors.numpy import load

    js, st = checkpoint_paths(path)
    if not js.is_file():
        if Path(path).suffix not in (".json", ".safetensors") and not st.is_file():
            raise CheckpointError(f"{path}: no checkpoint ({js.name} and {st.name} not found)")
        raise CheckpointError(
            f"{js}: checkpoint description not found (every checkpoint has NAME.json next to NAME.safetensors)"
        )
    try:
        text = js.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{js}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    if text[:1] == "\x80" or text[:2] == "PK":
        raise CheckpointError(f"{js}: a pickle file, not a JSON checkpoint description")
    try:
        desc = json.loads(text)
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{js}: line {e.lineno}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise CheckpointError(
            f"{js}: not a checkpoint description (JSON nested too deeply)"
        ) from None
    if not isinstance(desc, dict):
        raise CheckpointError(f"{js}: expected a JSON object")
    fmt = _field(desc, "format", str, js)
    if fmt != FORMAT:
        raise CheckpointError(f"{js}: field 'format': expected {FORMAT!r}, got {fmt!r}")
    alg = _field(desc, "algorithm", str, js)
    if alg != algorithm:
        raise CheckpointError(f"{js}: field 'algorithm': expected {algorithm!r}, got {alg!r}")
    digest = _field(desc, "sha256", str, js)
    declared = _field(desc, "tensors", dict, js)
    want = expected_shapes(desc, js)
    try:
        blob = st.read_bytes()
    except OSError as e:
        raise CheckpointError(f"{st}: cannot read weights: {e.strerror or e}") from None
    _check_safetensors_bytes(blob, st)
    if hashlib.sha256(blob).hexdigest() != digest:
        raise CheckpointError(f"{st}: weights do not match {js.name} (field 'sha256')")
    try:
        tensors = load(blob)
    except Exception as e:  # safetensors raises its own error types
        raise CheckpointError(f"{st}: not a valid safetensors file: {_one_line(e)}") from None
    for name, shape in want.items():
        if name not in tensors:
            raise CheckpointError(f"{st}: missing tensor {name!r} (expected shape {shape})")
        got = list(tensors[name].shape)
        if got != list(shape):
            raise CheckpointError(f"{st}: tensor {name!r}: expected shape {list(shape)}, got {got}")
        if declared.get(name) != got:
            raise CheckpointError(
                f"{js}: field 'tensors.{name}': expected {got}, got {declared.get(name)!r}"
            )
        if tensors[name].dtype != np.float32:
            raise CheckpointError(
                f"{st}: tensor {name!r}: expected float32, got {tensors[name].dtype}"
            )
        if not np.all(np.isfinite(tensors[name])):
            raise CheckpointError(f"{st}: tensor {name!r}: contains NaN or infinity")
    extra = sorted(set(tensors) - set(want))
    if extra:
        raise CheckpointError(f"{st}: unexpected tensor {extra[0]!r}")
    return desc, tensors, js, st


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
