"""Source audit: the parsers, the model and the tool layer are read-only and run nothing.

The one thing that runs anything is an executor an application configures (the DuckDB
one lives in ``okfx.attest.duckdb_executor``, imported only by name); it runs bound SQL in
its own engine, never a process, and the audit holds for it too.

Only ``okfx.sources`` may run ``git`` and write into its cache, and only the state cache
(``okfx.cachedir`` makes its private folder, ``okfx.statecache`` and ``okfx.statefile``
write its files) writes anything else; the CLI and the adapters (servers) sit outside the
audited core. Nothing in the package reads anything with pickle or marshal.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import okfx

PACKAGE = Path(okfx.__file__).resolve().parent
# The state cache writes its own private folder (tests/test_state_cache.py); its files are
# read back as checked arrays and JSON only (test_state_files_are_read_without_pickle).
# The command line (the cli package) and the servers (adapters) sit outside it too.
# cachedir.py creates the private cache folders (mkdir only, pinned below).
# cachebound.py deletes old state files in that folder (tests/test_cache_bound.py).
# search/vectors.py is the opt-in vector cache of hybrid search: it writes its own
# private folder, data only (tests/test_search_hybrid.py), never pickle.
# search/quantized.py rewrites the default model in a temporary folder and keeps the
# result in the state cache, as bytes onnxruntime parses (tests/test_search_quantized.py).
OUTSIDE_THE_CORE = {
    "__main__.py",
    "cachebound.py",
    "cachedir.py",
    "statecache.py",
    "statefile.py",
    "search/quantized.py",
    "search/vectors.py",
}
# What reads a state file back: each must decode it with json, array and mmap alone.
STATE_READERS = (
    "statefile.py",
    "statecache.py",
    "records.py",
    "bundle/state.py",
    "bundle/stored.py",
    "bundle/texts.py",
    "search/saved.py",
    "search/corpus.py",
    "search/quantized.py",
)

FORBIDDEN_MODULES = {
    "subprocess",
    "socket",
    "ssl",
    "http",
    "urllib.request",
    "ftplib",
    "smtplib",
    "asyncio.subprocess",
    "multiprocessing",
    "pickle",
    "marshal",
    "shutil",
    "tempfile",
    "ctypes",
    "importlib",
    "runpy",
    "code",
    "pty",
}
FORBIDDEN_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "breakpoint",
    "system",
    "popen",
    "spawnl",
    "spawnv",
    "spawnve",
    "execv",
    "execve",
    "execvp",
    "fork",
    "remove",
    "unlink",
    "rmdir",
    "rename",
    "replace_file",
    "mkdir",
    "makedirs",
    "write",
    "write_text",
    "write_bytes",
    "truncate",
    "chmod",
    "chown",
    "symlink",
    "link",
    "mkfifo",
    "create_subprocess_exec",
    "create_subprocess_shell",
}
WRITE_MODES = ("w", "a", "x", "+")
# memory.py asks glibc to give freed heap pages back (malloc_trim): the one use of ctypes,
# pinned by test_only_memory_uses_ctypes_and_only_for_malloc_trim.
ALLOWED_IMPORTS = {"memory.py": {"ctypes"}}


def core_files() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("sources", "adapters", "cli") or rel.as_posix() in OUTSIDE_THE_CORE:
            continue
        files.append(path)
    return files


def violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            names = []
        for name in names:
            if name in ALLOWED_IMPORTS.get(path.name, ()):
                continue
            if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                found.append(f"line {node.lineno}: imports {name}")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            receiver = func.value if isinstance(func, ast.Attribute) else None
            is_regex_compile = (
                name == "compile"
                and isinstance(receiver, ast.Name)
                and receiver.id in ("re", "re2")
            )
            if name in FORBIDDEN_CALLS and not is_regex_compile:
                found.append(f"line {node.lineno}: calls {name}()")
            if name == "open" and isinstance(func, ast.Name):
                mode = node.args[1] if len(node.args) > 1 else None
                for kw in node.keywords:
                    if kw.arg == "mode":
                        mode = kw.value
                if isinstance(mode, ast.Constant) and any(
                    m in str(mode.value) for m in WRITE_MODES
                ):
                    found.append(f"line {node.lineno}: opens for writing")
            if name == "open" and isinstance(receiver, ast.Name) and receiver.id == "os":
                flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND")):
                    found.append(f"line {node.lineno}: os.open for writing")
    return found


def importers(modules: str) -> list[str]:
    """Package files with an import statement of one of ``modules`` (a regex union)."""
    pattern = re.compile(rf"^\s*(import|from) ({modules})\b", re.M)
    return sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if pattern.search(path.read_text("utf-8"))
    )


def test_ctypes_looks_up_only_malloc_trim_mallopt_and_prctl() -> None:
    # memory.py trims and bounds the C heap; the workers' supervisor (a script that
    # imports nothing from okfx, so not through memory.py) asks to adopt its workers.
    allowed = {"memory.py": {"malloc_trim", "mallopt"}, "adapters/workers.py": {"prctl"}}
    assert importers("ctypes") == sorted(allowed)
    for name, names in allowed.items():
        tree = ast.parse((PACKAGE / name).read_text("utf-8"))
        looked_up = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "ctypes.CDLL"
        }
        assert looked_up == names, name


def test_cachedir_only_creates_folders() -> None:
    found = violations(PACKAGE / "cachedir.py")
    assert found and all(v.endswith("calls mkdir()") for v in found), found


def test_the_vector_cache_writes_nothing_itself() -> None:
    # Its file is a state file: the state cache writes it (temporary file, rename).
    assert violations(PACKAGE / "search" / "vectors.py") == []


def test_nothing_in_the_package_touches_pickle() -> None:
    assert importers("pickle|marshal|shelve|dill|cloudpickle|joblib") == []
    # Not even by name, through importlib or __import__.
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text("utf-8")
        assert not re.search(r"""["'](c?pickle|marshal|shelve)["']""", text), path


@pytest.mark.parametrize("name", STATE_READERS)
def test_state_files_are_read_without_pickle_or_dynamic_code(name: str) -> None:
    """No state file anywhere in the package is read with pickle: the modules that read
    one back import nothing that could run code from its bytes."""
    path = PACKAGE / name
    assert violations(path) == [] or name in OUTSIDE_THE_CORE
    tree = ast.parse(path.read_text("utf-8"))
    imported = {
        alias.name if isinstance(node, ast.Import) else node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    risky = {"pickle", "marshal", "shelve", "importlib", "ctypes", "yaml", "runpy", "code"}
    assert not {m for m in imported if m.split(".")[0] in risky}
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not calls & {"eval", "exec", "compile", "__import__"}


def test_only_the_duckdb_executor_imports_duckdb_and_only_the_cli_imports_it() -> None:
    assert importers("duckdb") == ["attest/duckdb_executor.py"]
    assert importers(r"okfx\.attest\.duckdb_executor") == ["cli/executors.py"]


def test_the_audit_covers_the_core() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in core_files()}
    core = {"bundle/frontmatter.py", "bundle/links.py", "bundle/bundle.py", "bundle/walk.py"}
    core |= {"attest/binding.py", "attest/verdict.py", "attest/duckdb_executor.py"}
    assert core | {"tools/toolbox.py", "tools/views.py", "search/index.py"} <= names


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_has_no_write_spawn_network_or_dynamic_code(path: Path) -> None:
    assert violations(path) == []


def test_the_audit_catches_what_it_looks_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import subprocess\nimport os\nos.system('x')\nopen('f', 'w')\neval('1')\n"
        "os.open('f', os.O_WRONLY)\nimport re\nre.compile('x')\n",
        encoding="utf-8",
    )
    assert len(violations(bad)) == 5
