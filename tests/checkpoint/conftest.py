"""Fixtures for the checkpoint tests: a real PostgreSQL server for the Postgres saver tests.

`pg_server` starts one scratch server per session (see pg_server.py). Without PostgreSQL
binaries the Postgres tests are skipped, except under `CI=true`, where they fail.
`WARPGRAPH_TEST_PG_DSN` points the tests at an existing server instead (a real one).
"""

from __future__ import annotations

import os

import pytest

from .pg_server import INSTALL_HINT, PgServer, PgServerError, create_database, find_bindir


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


class _External:
    """An already running server given by WARPGRAPH_TEST_PG_DSN."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    def dsn_for(self, dbname: str) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(self.dsn, dbname=dbname)


@pytest.fixture(scope="session")
def pg_server():
    """A running PostgreSQL server (started for this session and stopped at its end)."""
    pytest.importorskip("psycopg", reason="psycopg not installed (pip install warpgraph[postgres])")
    external = os.environ.get("WARPGRAPH_TEST_PG_DSN")
    if external:
        yield _External(external)
        return
    if find_bindir() is None:
        msg = f"PostgreSQL server binaries not found (install with `{INSTALL_HINT}`)"
        if _in_ci():
            pytest.fail(f"{msg}; CI=true requires the Postgres tests to run", pytrace=False)
        pytest.skip(msg)
    server = PgServer()
    try:
        server.start()
    except PgServerError as exc:
        if _in_ci():
            pytest.fail(f"could not start PostgreSQL: {exc}", pytrace=False)
        pytest.skip(f"could not start PostgreSQL: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_dsn(pg_server) -> str:
    """DSN of a database shared by the session's Postgres tests."""
    return pg_server.dsn_for(create_database(pg_server.dsn, "wg_session"))


@pytest.fixture
def pg_fresh_dsn(pg_server) -> str:
    """DSN of a brand-new, empty database (for tests that inspect whole tables)."""
    return pg_server.dsn_for(create_database(pg_server.dsn, "wg_test"))
