"""The DuckDB store: the only module that opens connections or runs DDL.

Every operation opens a short-lived connection and closes it, so between writes the file is
free and `setrl sql` / the `duckdb` CLI (read-only) can query a study while it runs. A file
locked by another process is retried with backoff, not a crash.

Writes are idempotent: `insert` is INSERT OR IGNORE on the table's content-hash primary key,
`upsert` replaces the row with the same key. Re-running a stage never duplicates rows.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

SCHEMA = Path(__file__).with_name("schema.sql")
LOCK_MARKERS = ("Could not set lock", "Conflicting lock", "database is locked", "being used by another process")


class StoreLockedError(RuntimeError):
    """The database stayed locked by another process for longer than the retry budget."""


def _is_lock_error(e: Exception) -> bool:
    return any(m in str(e) for m in LOCK_MARKERS)


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Store:
    """A DuckDB file with setrl's schema. Cheap to construct; holds no open connection."""

    def __init__(self, path: str | Path, read_only: bool = False, lock_timeout_s: float = 120.0):
        self.path = Path(path)
        self.read_only = read_only
        self.lock_timeout_s = lock_timeout_s
        if read_only:
            if not self.path.exists():
                raise FileNotFoundError(f"no DuckDB store at {self.path}")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.connect() as con:
                con.execute(SCHEMA.read_text())
        self._json_columns = None

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection; waits (with jittered backoff) while another process holds the lock."""
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.05
        while True:
            try:
                con = duckdb.connect(str(self.path), read_only=self.read_only)
                break
            except duckdb.Error as e:
                if not _is_lock_error(e):
                    raise
                if time.monotonic() > deadline:
                    raise StoreLockedError(f"{self.path} stayed locked for {self.lock_timeout_s:.0f}s by another process: {e}") from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 2.0)
        try:
            yield con
        finally:
            con.close()

    # ---- reads -------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        with self.connect() as con:
            return con.execute(sql, params or []).df()

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        with self.connect() as con:
            rows = con.execute(sql, params or []).fetchall()
        return rows[0][0] if rows else None

    # ---- writes ------------------------------------------------------------------------
    def _json_cols(self) -> dict[str, set[str]]:
        if self._json_columns is None:
            df = self.query("SELECT table_name, column_name FROM information_schema.columns WHERE data_type = 'JSON'")
            self._json_columns = {}
            for t, c in zip(df.table_name, df.column_name):
                self._json_columns.setdefault(t, set()).add(c)
        return self._json_columns

    def _frame(self, table: str, rows: Sequence[dict] | pd.DataFrame) -> pd.DataFrame:
        df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
        for col in self._json_cols().get(table, ()):
            if col in df.columns:
                df[col] = [None if v is None else json.dumps(v, default=str) for v in df[col]]
        return df

    def _write(self, verb: str, table: str, rows: Sequence[dict] | pd.DataFrame) -> int:
        if len(rows) == 0:
            return 0
        df = self._frame(table, rows)
        with self.connect() as con:
            before = con.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]
            con.register("_rows", df)
            con.execute(f'{verb} INTO "{table}" BY NAME SELECT * FROM _rows')
            con.unregister("_rows")
            after = con.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]
        return after - before

    def insert(self, table: str, rows: Sequence[dict] | pd.DataFrame) -> int:
        """Idempotent insert: rows whose primary key exists are skipped. Returns rows added."""
        return self._write("INSERT OR IGNORE", table, rows)

    def upsert(self, table: str, rows: Sequence[dict] | pd.DataFrame) -> int:
        """Insert or replace by primary key (for rows that change state, e.g. a stage's status)."""
        return self._write("INSERT OR REPLACE", table, rows)

    def replace(self, table: str, where: str, params: Sequence[Any], rows: Sequence[dict] | pd.DataFrame) -> int:
        """Atomically delete the rows matching `where` and insert `rows` (a stage's whole output for one scope)."""
        df = self._frame(table, rows)
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(f'DELETE FROM "{table}" WHERE {where}', list(params))
                if len(df):
                    con.register("_rows", df)
                    con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _rows')
                    con.unregister("_rows")
                con.execute("COMMIT")
            except Exception:
                con.execute("ROLLBACK")
                raise
        return len(df)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """DML only (UPDATE/DELETE); DDL lives in schema.sql."""
        with self.connect() as con:
            con.execute(sql, params or [])

    # ---- artifacts ---------------------------------------------------------------------
    def register_artifact(self, study_id: str, kind: str, name: str, path: str | Path, meta: dict | None = None) -> str:
        """Record a file too big for a table (checkpoint, plot, report) with its sha256 and size."""
        p = Path(path)
        files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
        digest = hashlib.sha256()
        size = 0
        for f in files:
            digest.update(str(f.relative_to(p) if p.is_dir() else f.name).encode())
            digest.update(sha256_file(f).encode())
            size += f.stat().st_size
        sha = digest.hexdigest()
        artifact_id = hashlib.sha256(f"{kind}|{p.resolve()}|{sha}".encode()).hexdigest()[:16]
        self.insert("artifacts", [{
            "artifact_id": artifact_id, "study_id": study_id, "kind": kind, "name": name,
            "path": str(p.resolve()), "sha256": sha, "bytes": size, "meta": meta or {},
        }])
        return artifact_id
