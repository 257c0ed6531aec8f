"""The DuckDB executor (``runtime: duckdb``), in the ``okfx[duckdb]`` extra.

It runs a bound computation over data files the *application* names when it builds the
executor (``{"trips": "data/trips.csv"}``), never over paths from a bundle. Each file
becomes a table of an in-memory database; after loading, the connection is locked down:
no file system or network access (``enable_external_access=false``, and no temp folder,
which DuckDB would let a query read and spill into), no extension
loading or installing, configuration locked, one thread. Only a single ``SELECT`` runs,
under a time limit (the connection is interrupted when it passes). Every run is
remembered by its ``run_id`` for a while, so :meth:`DuckDBExecutor.attest` can re-read a
receipt's result from the run itself rather than from the agent's copy.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from okfx.attest.binding import Bound, json_value
from okfx.attest.sqltext import STANDARD, SqlSyntaxError, tokenize
from okfx.attest.verdict import FAIL, PASS, Check
from okfx.errors import InvalidArgument, NotAttestable
from okfx.version import install_command

__all__ = ["DuckDBExecutor"]

#: Word pairs that start a statement changing data: ``UPDATE t SET`` is checked apart.
_CHANGES = {("delete", "from"), ("insert", "into"), ("insert", "or"), ("merge", "into")}


def _changes_data(sql: str) -> str | None:
    """The statement changing data that ``sql`` holds (``DELETE FROM``), read as tokens,
    so a word in a string or a comment is none; None when it holds none."""
    try:
        tokens = tokenize(sql, STANDARD)
    except SqlSyntaxError:
        return None  # DuckDB refuses it too
    words = [t.key if t.kind == "word" else "" for t in tokens]
    for i in range(len(words) - 1):
        if (words[i], words[i + 1]) in _CHANGES:
            return f"{words[i].upper()} {words[i + 1].upper()}"
        if words[i] == "update" and i + 2 < len(words) and words[i + 2] == "set":
            return "UPDATE ... SET"
    return None


_READERS = {
    ".csv": "read_csv",
    ".tsv": "read_csv",
    ".parquet": "read_parquet",
    ".json": "read_json",
    ".jsonl": "read_json",
    ".ndjson": "read_json",
}
_MAX_TABLE_NAME = 64


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise ImportError(
            "the DuckDB executor needs 'duckdb', which is not installed; "
            f"install it with: {install_command('duckdb')}"
        ) from exc
    return duckdb


def _table_name(name: str) -> str:
    ok = (
        isinstance(name, str)
        and 0 < len(name) <= _MAX_TABLE_NAME
        and name.isascii()
        and (name[0].isalpha() or name[0] == "_")
        and all(c.isalnum() or c == "_" for c in name)
    )
    if not ok:
        raise InvalidArgument(
            f"table name {name!r} must be a plain identifier (letters, digits, _), "
            f"at most {_MAX_TABLE_NAME} characters"
        )
    return name


def _cell(value: Any) -> Any:
    """A result cell as JSON."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return json_value(value)
    return str(value)


class DuckDBExecutor:
    """Runs ``runtime: duckdb`` computations over the data files named here.

    Args:
        tables: Table name -> data file (``.csv``, ``.tsv``, ``.parquet``, ``.json``,
            ``.jsonl``), chosen by the application, never taken from a bundle.
        timeout: Seconds a run may take before it is interrupted.
        max_rows: Result rows kept in a receipt (``truncated`` says when there were more).
        memory_limit: DuckDB's ``memory_limit`` for the database.
        keep_runs: How many runs :meth:`attest` can re-read by ``run_id``.
    """

    runtime = "duckdb"

    def __init__(
        self,
        tables: Mapping[str, str | os.PathLike[str]],
        *,
        timeout: float = 10.0,
        max_rows: int = 100,
        memory_limit: str = "512MB",
        keep_runs: int = 256,
    ) -> None:
        if not tables:
            raise InvalidArgument("the DuckDB executor needs at least one data file")
        self.tables: dict[str, Path] = {}
        for name, file in tables.items():
            path = Path(file).resolve()
            if path.suffix.casefold() not in _READERS:
                raise InvalidArgument(
                    f"data file {os.fspath(file)!r} for table {name!r} is not one of "
                    f"{', '.join(sorted(_READERS))}"
                )
            if not path.is_file():
                raise InvalidArgument(f"data file {os.fspath(file)!r} does not exist")
            if _table_name(name).casefold() in {t.casefold() for t in self.tables}:
                raise InvalidArgument(f"table {name!r} is named twice")
            self.tables[name] = path
        if not 0 < timeout <= 3600:
            raise InvalidArgument("timeout must be between 0 and 3600 seconds")
        self.timeout = timeout
        self.max_rows = max(1, max_rows)
        self.memory_limit = memory_limit
        self._keep = max(1, keep_runs)
        self._runs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._con: Any = None

    def __repr__(self) -> str:
        return f"DuckDBExecutor(tables={sorted(self.tables)!r}, timeout={self.timeout})"

    # -- the database ------------------------------------------------------------------------
    def _connection(self) -> Any:
        """The locked-down in-memory database holding the tables (built on first use)."""
        if self._con is not None:
            return self._con
        duckdb = _duckdb()
        con = duckdb.connect(
            ":memory:",
            config={
                "autoload_known_extensions": False,
                "autoinstall_known_extensions": False,
                "allow_community_extensions": False,
                "threads": 1,
                "memory_limit": self.memory_limit,
                # No temp folder: DuckDB lets a query read (and spill into) its temp folder,
                # <cwd>/.tmp by default, whatever enable_external_access says (security
                # QA); past memory_limit a query fails instead of spilling.
                "temp_directory": "",
            },
        )
        try:
            for name, path in self.tables.items():
                reader = _READERS[path.suffix.casefold()]
                # The path is a query parameter and the name a checked identifier.
                con.execute(
                    f'CREATE TABLE "{name}" AS SELECT * FROM {reader}($path)',
                    {"path": str(path)},
                )
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except Exception:
            con.close()
            raise
        self._con = con
        return con

    def close(self) -> None:
        """Close the database (the next run opens it again)."""
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    # -- running -----------------------------------------------------------------------------
    def run(self, bound: Bound) -> dict[str, Any]:
        """Run ``bound`` and return its receipt (``run_id``, ``executed_sql``, ``parameters``,
        ``columns``, ``result`` (the first row), ``rows``, ``row_count``, ``truncated``,
        ``engine``, ``elapsed_ms``, and ``error`` when the run failed)."""
        if bound.runtime.casefold() != self.runtime:
            raise InvalidArgument(
                f"{bound.path} has runtime {bound.runtime!r}; this executor runs duckdb"
            )
        duckdb = _duckdb()
        sql = bound.sql_for("$")
        parameters = bound.query_parameters()
        with self._lock:
            con = self._connection()
            statements = con.extract_statements(sql)
            if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
                kinds = ", ".join(str(s.type).rsplit(".", 1)[-1] for s in statements)
                raise NotAttestable(
                    f"{bound.path}: the DuckDB executor runs one SELECT statement; this "
                    f"computation is {kinds or 'empty'}",
                    path=bound.path,
                )
            changes = _changes_data(sql)
            if changes is not None:
                # DuckDB calls WITH gone AS (DELETE ... RETURNING *) SELECT ... a SELECT:
                # one bundle's computation deleted rows every other one then read (AC QA).
                raise NotAttestable(
                    f"{bound.path}: its SQL changes data ({changes} inside the SELECT); the "
                    "DuckDB executor runs computations that only read",
                    path=bound.path,
                )
            started = time.monotonic()
            timer = threading.Timer(self.timeout, con.interrupt)
            timer.start()
            error: str | None = None
            columns: list[str] = []
            rows: list[Any] = []
            # Each run is a transaction rolled back, whatever it did: no run changes what
            # the next one reads, whichever statement DuckDB let through.
            con.execute("BEGIN TRANSACTION")
            try:
                cursor = con.execute(sql, parameters)
                columns = [d[0] for d in cursor.description or ()]
                rows = cursor.fetchmany(self.max_rows + 1)
            except duckdb.InterruptException:
                error = f"interrupted: the run took longer than {self.timeout} seconds"
            except duckdb.Error as exc:
                error = f"{type(exc).__name__}: {exc}"
            finally:
                timer.cancel()
                try:
                    con.execute("ROLLBACK")
                except duckdb.Error:  # a database that cannot roll back is made again
                    con.close()
                    self._con = None
            elapsed = round((time.monotonic() - started) * 1000, 1)
        table = [[_cell(v) for v in row] for row in rows[: self.max_rows]]
        receipt: dict[str, Any] = {
            "run_id": f"duckdb:{uuid.uuid4().hex}",
            "executed_sql": sql,
            "parameters": {k: json_value(v) for k, v in parameters.items()},
            "columns": columns,
            "result": table[0] if table else None,
            "rows": table,
            "row_count": len(table),
            "truncated": len(rows) > self.max_rows,
            "engine": f"duckdb {duckdb.__version__}",
            "elapsed_ms": elapsed,
        }
        if error is not None:
            receipt["error"] = error
        self._remember(receipt)
        return receipt

    def _remember(self, receipt: dict[str, Any]) -> None:
        record = {k: receipt.get(k) for k in ("executed_sql", "parameters", "result", "error")}
        record["rows"] = receipt.get("rows")
        with self._lock:
            self._runs[receipt["run_id"]] = record
            while len(self._runs) > self._keep:
                self._runs.popitem(last=False)

    def attest(self, bound: Bound, receipt: Mapping[str, Any]) -> list[Check]:
        """Re-read the run a receipt names and compare: the receipt's SQL, values and
        result must be what that run had (an attester for ``runtime: duckdb``)."""
        run_id = receipt.get("run_id")
        with self._lock:
            record = self._runs.get(run_id) if isinstance(run_id, str) else None
        if record is None:
            # Not re-read is not attested (spec §10.5 step 5): a receipt this executor
            # did not make may hold any result (Attested Computation QA).
            return [
                Check(
                    "rerun",
                    FAIL,
                    f"run {str(run_id)[:80]!r} is not one this DuckDB executor made (or still "
                    f"remembers, of its last {self._keep}), so its result could not be re-read; "
                    "run the computation again with run_computation",
                )
            ]
        # ``rows`` (what an agent may show as a table) when the receipt keeps them: one
        # that leaves them out to save room is not the worse for it (AC QA: forged rows
        # passed, only the first row was re-read).
        changed = [
            k for k, v in record.items() if receipt.get(k) != v and (k != "rows" or k in receipt)
        ]
        if changed:
            return [
                Check(
                    "rerun",
                    FAIL,
                    f"the receipt's {', '.join(changed)} differ from what run {run_id} "
                    "recorded (re-read by run id)",
                    {"changed": changed},
                )
            ]
        return [Check("rerun", PASS, f"the receipt matches run {run_id} (re-read by run id)")]
