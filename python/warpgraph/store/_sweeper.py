"""The TTL sweeper thread of the sync stores (in-memory and SQL): `store.sweep_ttl()` every
interval on a daemon thread, until stopped or the future it returned is cancelled.
(Its own module: the in-memory store uses it without importing the SQL machinery.)"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any

__all__ = ("ThreadSweeper", "interval_seconds")

logger = logging.getLogger("warpgraph.store")


def interval_seconds(store: Any, minutes: float | None) -> float:
    return 60.0 * float(minutes or (store.ttl_config or {}).get("sweep_interval_minutes") or 5)


class ThreadSweeper:
    """The sync stores' TTL sweeper: `store.sweep_ttl()` every interval on a daemon thread."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.stop_event = threading.Event()

    def start(self, store: Any, minutes: float | None) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not store.ttl_config:
            future.set_result(None)
            return future
        if self.thread is not None and self.thread.is_alive():
            logger.info("TTL sweeper thread is already running")
            future.add_done_callback(lambda f: self.stop_event.set() if f.cancelled() else None)
            return future
        self.stop_event.clear()
        interval = interval_seconds(store, minutes)
        stop = self.stop_event

        def loop() -> None:
            while not stop.wait(interval):
                try:
                    swept = store.sweep_ttl()
                    if swept:
                        logger.info("Store swept %d expired items", swept)
                except Exception:
                    logger.exception("Store TTL sweep iteration failed")
            if not future.done():
                future.set_result(None)

        self.thread = threading.Thread(target=loop, daemon=True, name="ttl-sweeper")
        self.thread.start()
        future.add_done_callback(lambda f: stop.set() if f.cancelled() else None)
        return future

    def stop(self, timeout: float | None) -> bool:
        thread = self.thread
        if thread is None or not thread.is_alive():
            return True
        self.stop_event.set()
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("Timed out waiting for TTL sweeper thread to stop")
            return False
        self.thread = None
        return True
