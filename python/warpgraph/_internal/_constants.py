"""Reserved channel names, write keys and config keys.

The string values are part of the persisted format and of LangGraph's config protocol,
so they are exactly LangGraph's; every name is interned once here.
"""

from __future__ import annotations

import sys
from typing import Final

_i = sys.intern

# Reserved write keys / pseudo-channels.
INPUT: Final = _i("__input__")
INTERRUPT: Final = _i("__interrupt__")
RESUME: Final = _i("__resume__")
ERROR: Final = _i("__error__")
ERROR_SOURCE_NODE: Final = _i("__error_source_node__")
NO_WRITES: Final = _i("__no_writes__")
TASKS: Final = _i("__pregel_tasks")
RETURN: Final = _i("__return__")
PREVIOUS: Final = _i("__previous__")
SNAPSHOT_BUMPS: Final = _i("__snapshot_bumps__")
CACHE_NS_WRITES: Final = _i("__pregel_ns_writes")
OVERWRITE: Final = _i("__overwrite__")

# Task kinds (first element of a task path).
PUSH: Final = _i("__pregel_push")
PULL: Final = _i("__pregel_pull")

# Checkpoint namespaces: "parent|child:task_id".
NS_SEP: Final = _i("|")
NS_END: Final = _i(":")

NULL_TASK_ID: Final = _i("00000000-0000-0000-0000-000000000000")
CONF: Final = _i("configurable")
TAG_HIDDEN: Final = _i("langsmith:hidden")
TAG_NOSTREAM: Final = _i("nostream")

# Keys inside config["configurable"].
CONFIG_KEY_SEND: Final = _i("__pregel_send")
CONFIG_KEY_READ: Final = _i("__pregel_read")
CONFIG_KEY_READ_STATE: Final = _i("__pregel_read_state")
CONFIG_KEY_CALL: Final = _i("__pregel_call")
CONFIG_KEY_CHECKPOINTER: Final = _i("__pregel_checkpointer")
CONFIG_KEY_STREAM: Final = _i("__pregel_stream")
CONFIG_KEY_CACHE: Final = _i("__pregel_cache")
CONFIG_KEY_RESUMING: Final = _i("__pregel_resuming")
CONFIG_KEY_TASK_ID: Final = _i("__pregel_task_id")
CONFIG_KEY_THREAD_ID: Final = _i("thread_id")
CONFIG_KEY_CHECKPOINT_MAP: Final = _i("checkpoint_map")
CONFIG_KEY_CHECKPOINT_ID: Final = _i("checkpoint_id")
CONFIG_KEY_CHECKPOINT_NS: Final = _i("checkpoint_ns")
CONFIG_KEY_NODE_FINISHED: Final = _i("__pregel_node_finished")
CONFIG_KEY_SCRATCHPAD: Final = _i("__pregel_scratchpad")
CONFIG_KEY_DURABILITY: Final = _i("__pregel_durability")
CONFIG_KEY_RUNTIME: Final = _i("__pregel_runtime")
CONFIG_KEY_RESUME_MAP: Final = _i("__pregel_resume_map")
CONFIG_KEY_RUNNER_SUBMIT: Final = _i("__pregel_runner_submit")
CONFIG_KEY_NODE_ERROR: Final = _i("__pregel_node_error")

# Write keys that apply_writes never routes to a channel.
RESERVED_WRITE_KEYS: Final = frozenset(
    (NO_WRITES, PUSH, RESUME, INTERRUPT, RETURN, ERROR, ERROR_SOURCE_NODE)
)

CONFIG_KEY_REPLAY_STATE: Final = _i("__pregel_replay_state")
CONFIG_KEY_TIMED_ATTEMPT_OBSERVER: Final = _i("__pregel_timed_attempt_observer")
CONFIG_KEY_STRICT_RESUME: Final = _i("__pregel_strict_resume")
CONFIG_KEY_STREAM_MESSAGES_V2: Final = _i("__pregel_stream_messages_v2")

# Names a user node or state key may not take; apply_writes never consumes these.
RESERVED: Final = frozenset(
    (
        TAG_HIDDEN,
        INPUT,
        INTERRUPT,
        RESUME,
        ERROR,
        ERROR_SOURCE_NODE,
        NO_WRITES,
        SNAPSHOT_BUMPS,
        CONFIG_KEY_SEND,
        CONFIG_KEY_READ,
        CONFIG_KEY_CHECKPOINTER,
        CONFIG_KEY_STREAM,
        CONFIG_KEY_CHECKPOINT_MAP,
        CONFIG_KEY_RESUMING,
        CONFIG_KEY_REPLAY_STATE,
        CONFIG_KEY_TASK_ID,
        CONFIG_KEY_CHECKPOINT_ID,
        CONFIG_KEY_CHECKPOINT_NS,
        CONFIG_KEY_TIMED_ATTEMPT_OBSERVER,
        CONFIG_KEY_RESUME_MAP,
        CONFIG_KEY_STRICT_RESUME,
        CONFIG_KEY_STREAM_MESSAGES_V2,
        PUSH,
        PULL,
        NS_SEP,
        NS_END,
        CONF,
    )
)

# An explicit configurable naming any of these addresses its own checkpoint lineage.
_CHECKPOINT_COORDINATE_KEYS: Final = (
    CONFIG_KEY_THREAD_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
)

del _i
