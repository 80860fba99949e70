"""Integration tests reuse the checkpoint tests' PostgreSQL fixtures (a scratch server
started by the session; see tests/checkpoint/pg_server.py)."""

from tests.checkpoint.conftest import pg_dsn, pg_fresh_dsn, pg_server  # noqa: F401
