"""The Postgres fixtures (`pg_server`, `pg_dsn`, `pg_fresh_dsn`) live in tests/conftest.py:
one scratch server per session, shared with tests/checkpoint (see checkpoint/pg_server.py)."""
