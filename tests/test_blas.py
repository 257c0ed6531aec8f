"""okfx.blas: a server asks numpy's BLAS for one thread, before numpy loads, unless the
user chose a thread count; okfx serve --semantic does so before it loads the model."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import PROJECT_ROOT
from okfx import blas
from okfx.blas import BLAS_THREAD_VARIABLES, one_blas_thread
from okfx.cli import commands

EXAMPLE = str(PROJECT_ROOT / "examples" / "knowledge")


def test_sets_each_blas_variable_to_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    env: dict[str, str] = {"PATH": "/bin"}
    assert one_blas_thread(env) is True
    assert {name: env[name] for name in BLAS_THREAD_VARIABLES} == dict.fromkeys(
        BLAS_THREAD_VARIABLES, "1"
    )


@pytest.mark.parametrize("chosen", ["OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"])
def test_a_thread_count_the_user_chose_wins(chosen: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "numpy", raising=False)
    env = {chosen: "4"}
    assert one_blas_thread(env) is False
    assert env == {chosen: "4"}


def test_too_late_once_numpy_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", sys)  # any module object
    env: dict[str, str] = {}
    assert one_blas_thread(env) is False
    assert env == {}


_THREADS = """
import os, sys
sys.path.insert(0, {src!r})
if sys.argv[1] == "one":
    from okfx.blas import one_blas_thread
    assert one_blas_thread()
import numpy as np
vectors = np.ones((20000, 384), dtype=np.float32)
for _ in range(20):
    vectors @ np.ones(384, dtype=np.float32)
print(len(os.listdir("/proc/self/task")))
"""


def _threads_after_a_product(mode: str) -> int:
    env = {
        k: v for k, v in os.environ.items() if k not in (*BLAS_THREAD_VARIABLES, "OMP_NUM_THREADS")
    }
    code = _THREADS.format(src=str(PROJECT_ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-c", code, mode], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_the_product_runs_in_the_calling_thread_alone() -> None:
    pytest.importorskip("numpy", reason="numpy comes with okfx[semantic]")
    assert _threads_after_a_product("one") == 1
    if (os.cpu_count() or 1) > 1:  # the default starts a thread per core
        assert _threads_after_a_product("default") > 1


def test_serve_semantic_asks_before_the_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp", reason="okfx serve needs the mcp extra")
    from okfx import gcpause
    from okfx.adapters import mcp as adapter

    monkeypatch.setattr(gcpause, "_freeze", False)  # restored after the test
    calls: list[str] = []
    monkeypatch.setattr(blas, "one_blas_thread", lambda: calls.append("blas") or True)
    monkeypatch.setattr(commands, "_enable_semantic", lambda *a, **k: calls.append("semantic"))
    monkeypatch.setattr(adapter, "serve_stdio", lambda server: calls.append("serve"))
    result = CliRunner().invoke(commands.cli, ["serve", EXAMPLE, "--semantic", "--lazy-index"])
    assert result.exit_code == 0, result.output
    assert calls == ["blas", "semantic", "serve"]
    calls.clear()
    result = CliRunner().invoke(commands.cli, ["serve", EXAMPLE, "--lazy-index"])
    assert result.exit_code == 0, result.output
    assert calls == ["serve"]  # lexical: numpy never loads, nothing to ask
    gc.unfreeze()  # what okfx serve froze of this process
