"""The README's test command ends with one line per kind of skip, saying what the skipped
tests need, not one ``SKIPPED`` line per test naming a path a newcomer does not have."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

from conftest import NO_SAMPLES, PROJECT_ROOT, _skip_reason


def test_skipped_sample_tests_are_one_line_that_says_what_they_need(tmp_path: object) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_samples.py"],
        cwd=PROJECT_ROOT,
        env={**os.environ, "OKFX_SAMPLES": str(PROJECT_ROOT / "no-such-folder")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    lines = proc.stdout.splitlines()
    summary = [line for line in lines if NO_SAMPLES in line]
    assert len(summary) == 1 and summary[0].split()[1] == "skipped:", lines[-5:]
    assert not any(line.startswith("SKIPPED") for line in lines)
    assert "../shared is absent" not in proc.stdout


def test_a_missing_package_is_summed_up_by_name_with_the_extras_to_install() -> None:
    def reason(text: str) -> str:
        return _skip_reason(SimpleNamespace(longrepr=("x.py", 3, f"Skipped: {text}")))

    adk = reason("could not import 'google.adk': No module named 'google.adk'")
    assert (
        adk
        == "need 'google.adk', which is not installed: pip install -e \".[dev,all]\" installs it"
    )
    assert reason("could not import 'duckdb': No module named 'duckdb'").startswith("need 'duckdb'")
    assert reason("the DuckDB executor needs the duckdb extra") == (
        "the DuckDB executor needs the duckdb extra"
    )
