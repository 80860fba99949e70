"""The registered scenarios that use a checkpointer, on each library's SqliteSaver and
PostgresSaver (a real throwaway server: the session's `pg_server`; under CI=true it must
run, never skip): invoke and the multi-mode stream, sync, under each of the scenario's
durabilities ("async", the default, runs the savers' group-commit writers; "sync" and
"exit" their batched sessions)."""

import pytest

from . import scenarios_all  # noqa: F401 - registers the scenarios
from .harness import REGISTRY, Scenario, compare_sync
from .libs import get_lib
from .savers import SaverKind, SaverLib

SQL_APIS = ("invoke", "multi")
# scenarios whose reference trace is not deterministic under its default ("async")
# durability on an SQL saver: LangGraph serialises the checkpoint in the background, after
# the next step may have changed a channel's live value in place (a Topic that
# accumulates), so they run under their explicit durabilities only
REFERENCE_RACES = {"ephemeral_and_topic", "delta_parallel_writers_and_overwrite"}
# scenarios whose checkpoint listing on LangGraph's SqliteSaver differs by design: that saver
# keeps a checkpoint's values only in the checkpoint that stored them, warpgraph's SQLite
# saver (like both libraries' InMemorySaver and PostgresSaver) finds a value by its version,
# so a checkpoint after a DeltaChannel snapshot that left the channel unchanged lists the
# snapshot too (the state read back is the same: tests/unit/test_delta_channel.py)
SQLITE_VALUES_BY_VERSION = {"delta_messages_get_ids"}
# scenarios that seed checkpoints LangGraph's PostgresSaver cannot store: a pre-v4
# checkpoint's `pending_sends` (Send objects) go into its JSONB column as they are
POSTGRES_REFERENCE_CANNOT_STORE = {"old_layout_pending_sends"}


def _uses_saver(scn: Scenario) -> bool:
    made = []

    def make():
        made.append(1)
        return get_lib("langgraph").InMemorySaver()

    try:
        scn.build(SaverLib(get_lib("langgraph"), make))
    except Exception:  # noqa: BLE001 - a build_errors scenario: compared elsewhere
        return False
    return bool(made)


SAVER_SCENARIOS = [scn for scn in REGISTRY.values() if False in scn.aio and _uses_saver(scn)]


def _params(skip: set[str] = frozenset()) -> list:
    return [
        pytest.param(scn, api, dur, id=f"{scn.name}-{api}-{dur or 'default'}")
        for scn in SAVER_SCENARIOS
        if scn.name not in skip
        for dur in dict.fromkeys((*scn.durabilities, None))
        if dur is not None or scn.name not in REFERENCE_RACES
        for api in SQL_APIS
    ]


def test_saver_scenarios_exist():
    assert len(SAVER_SCENARIOS) >= 10, [s.name for s in SAVER_SCENARIOS]


@pytest.mark.parametrize(("scn", "api", "durability"), _params(SQLITE_VALUES_BY_VERSION))
def test_sqlite(scn, api, durability):
    compare_sync(scn, api, durability, saver=SaverKind("sqlite"))


@pytest.fixture(scope="module")
def pg_dsns(pg_server):
    from tests.checkpoint.pg_server import create_database

    return {
        name: pg_server.dsn_for(create_database(pg_server.dsn, f"wg_diff_{name[:2]}"))
        for name in ("langgraph", "warpgraph")
    }


@pytest.mark.parametrize(("scn", "api", "durability"), _params(POSTGRES_REFERENCE_CANNOT_STORE))
def test_postgres(scn, api, durability, pg_dsns):
    compare_sync(scn, api, durability, saver=SaverKind("postgres", pg_dsns))
