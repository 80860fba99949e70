"""LangGraph's public checkpointer conformance suite against the Postgres savers (real server).

Every mode is run: sync saver on a connection, on a pool and in pipeline mode; async saver
on a connection and on a pool. All base tests and the optional copy_thread,
delete_for_runs and prune capabilities must be detected and pass.
"""

from __future__ import annotations

import pytest

conformance = pytest.importorskip("langgraph.checkpoint.conformance")
pytest.importorskip("psycopg")
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from warpgraph.checkpoint.postgres import PostgresSaver
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from ._conformance import assert_full_pass

MODES = ["sync-conn", "sync-pool", "sync-pipeline", "async-conn", "async-pool", "async-pipeline"]


def _factory(mode: str, dsn: str):
    kind, how = mode.split("-")
    kwargs = {"pool_size": 4} if how == "pool" else {"pipeline": how == "pipeline"}

    if kind == "sync":

        @conformance.checkpointer_test(name=f"warpgraph.PostgresSaver[{how}]")
        async def factory():
            with PostgresSaver.from_conn_string(dsn, **kwargs) as saver:
                saver.setup()
                yield saver

    else:

        @conformance.checkpointer_test(name=f"warpgraph.AsyncPostgresSaver[{how}]")
        async def factory():
            async with AsyncPostgresSaver.from_conn_string(dsn, **kwargs) as saver:
                await saver.setup()
                yield saver

    return factory


@pytest.mark.parametrize("mode", MODES)
async def test_postgres_saver_passes_full_conformance_suite(mode: str, pg_dsn: str) -> None:
    assert_full_pass(
        await conformance.validate(_factory(mode, pg_dsn), progress=ProgressCallbacks.quiet())
    )
