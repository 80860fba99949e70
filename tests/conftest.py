"""Shared pytest setup: hypothesis profiles, the `lib` fixture (langgraph / warpgraph) and
the session's one PostgreSQL server (`pg_server`, `pg_dsn`, `pg_fresh_dsn`)."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests._ci import (
    FAST_PATHS_SKIP,
    LONG_SKIP,
    PY310_REFERENCE_SKIP,
    in_ci,
    pytest_make_collect_report,  # noqa: F401 - hooks: pytest finds them here
    pytest_runtest_makereport,  # noqa: F401
)

settings.register_profile(
    "default",
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    deadline=None,
    max_examples=400,
    suppress_health_check=[HealthCheck.too_slow],
)
# `differential.libs` is importable whether or not tests/ is a package
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

LONG = os.environ.get("WARPGRAPH_LONG_TESTS") == "1"
settings.load_profile("long" if LONG else "default")


def pytest_configure(config):
    config.addinivalue_line("markers", "long: opt-in long variant (WARPGRAPH_LONG_TESTS=1)")
    config.addinivalue_line(
        "markers",
        "fast_paths: tests a fast path itself (a batching session, the native writer, "
        "engine-encoded envelopes, ...), which WARPGRAPH_FAST_PATHS=0 turns off: not run then",
    )


def pytest_report_header(config):
    from differential.random_graphs import RANDOM_SEED

    return f"random graphs: WARPGRAPH_RANDOM_SEED={RANDOM_SEED} (set it to reproduce this run)"


if sys.version_info < (3, 11):
    # On Python 3.10 LangGraph's async runs do not carry the run's context into their
    # tasks (asyncio.create_task(context=) is 3.11+; langgraph.config.get_config says so):
    # get_config() raises there, and interrupts in subgraphs, stream writers and callbacks
    # silently see another run's context. The reference's async behaviour is then not
    # LangGraph's specification, so a test that drives the reference asynchronously skips
    # when it starts such a run (each is compared on 3.11+). warpgraph has no such limit;
    # its own async tests run on 3.10 too.
    import functools

    from langgraph.pregel.main import Pregel as _ReferencePregel

    def _skipping(name: str):
        original = getattr(_ReferencePregel, name)

        @functools.wraps(original)
        def entry(*args, **kwargs):
            pytest.skip(PY310_REFERENCE_SKIP)

        return entry

    for _name in ("ainvoke", "astream", "astream_events", "abatch", "abatch_as_completed"):
        setattr(_ReferencePregel, _name, _skipping(_name))


def pytest_collection_modifyitems(config, items):
    from warpgraph._internal._flags import FAST_PATHS

    skip_long = pytest.mark.skip(reason=LONG_SKIP)
    skip_fast = pytest.mark.skip(reason=FAST_PATHS_SKIP)
    for item in items:
        if not LONG and "long" in item.keywords:
            item.add_marker(skip_long)
        if not FAST_PATHS and "fast_paths" in item.keywords:
            item.add_marker(skip_fast)


# --- PostgreSQL: ONE scratch server per session, shared by every test directory --------
# (tests/checkpoint, tests/integration, ...). Without PostgreSQL binaries the Postgres
# tests are skipped, except under CI=true, where they fail. WARPGRAPH_TEST_PG_DSN points
# them at an existing server instead.


class _ExternalPg:
    """An already running server given by WARPGRAPH_TEST_PG_DSN."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    def dsn_for(self, dbname: str) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(self.dsn, dbname=dbname)


@pytest.fixture(scope="session")
def pg_server():
    """A running PostgreSQL server (started once for the session, stopped at its end)."""
    from tests.checkpoint.pg_server import INSTALL_HINT, PgServer, PgServerError, find_bindir

    if in_ci():
        import psycopg  # noqa: F401 - CI must have it: fail, never skip
    else:
        pytest.importorskip("psycopg", reason="psycopg not installed (warpgraph[postgres])")
    external = os.environ.get("WARPGRAPH_TEST_PG_DSN")
    if external:
        yield _ExternalPg(external)
        return
    if find_bindir() is None:
        msg = f"PostgreSQL server binaries not found (install with `{INSTALL_HINT}`)"
        if in_ci():
            pytest.fail(f"{msg}; CI=true requires the Postgres tests to run", pytrace=False)
        pytest.skip(msg)
    server = PgServer()
    try:
        server.start()
    except PgServerError as exc:
        if in_ci():
            pytest.fail(f"could not start PostgreSQL: {exc}", pytrace=False)
        pytest.skip(f"could not start PostgreSQL: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_dsn(pg_server) -> str:
    """DSN of a database shared by the session's Postgres tests."""
    from tests.checkpoint.pg_server import create_database

    return pg_server.dsn_for(create_database(pg_server.dsn, "wg_session"))


@pytest.fixture
def pg_fresh_dsn(pg_server) -> str:
    """DSN of a brand-new, empty database (for tests that inspect whole tables)."""
    from tests.checkpoint.pg_server import create_database

    return pg_server.dsn_for(create_database(pg_server.dsn, "wg_test"))


@pytest.fixture(params=["langgraph", "warpgraph"])
def lib(request):
    """Each library in turn; warpgraph is skipped while it is not importable."""
    from differential.libs import get_lib, warpgraph_import_error

    if request.param == "warpgraph" and (err := warpgraph_import_error()) is not None:
        pytest.skip(f"warpgraph not importable yet ({err})")
    return get_lib(request.param)
