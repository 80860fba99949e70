"""v3 streaming: run streams with typed projections built by stream transformers.

`graph.stream_events(input, version="v3")` (or `await graph.astream_events(...)`) returns a
run stream; compile with `transformers=[...]` or pass `transformers=` to add projections.
"""

from warpgraph.stream import _types, run_stream, stream_channel, transformers

# the extension point, its events and its channels
StreamTransformer = _types.StreamTransformer
ProtocolEvent = _types.ProtocolEvent
StreamChannel = stream_channel.StreamChannel
# what stream_events(version="v3") returns (and the subgraph handles it yields)
GraphRunStream = run_stream.GraphRunStream
AsyncGraphRunStream = run_stream.AsyncGraphRunStream
SubgraphRunStream = run_stream.SubgraphRunStream
AsyncSubgraphRunStream = run_stream.AsyncSubgraphRunStream
# built-in transformers (ValuesTransformer / MessagesTransformer: see .transformers)
LifecycleTransformer = transformers.LifecycleTransformer
LifecyclePayload = transformers.LifecyclePayload
SubgraphTransformer = transformers.SubgraphTransformer
SubgraphStatus = transformers.SubgraphStatus
UpdatesTransformer = transformers.UpdatesTransformer
CustomTransformer = transformers.CustomTransformer
CheckpointsTransformer = transformers.CheckpointsTransformer
DebugTransformer = transformers.DebugTransformer
TasksTransformer = transformers.TasksTransformer

__all__ = (  # sorted; GraphRunStream & co. are what stream_events(version="v3") returns
    "AsyncGraphRunStream", "AsyncSubgraphRunStream", "CheckpointsTransformer",
    "CustomTransformer", "DebugTransformer", "GraphRunStream", "LifecyclePayload",
    "LifecycleTransformer", "ProtocolEvent", "StreamChannel", "StreamTransformer",
    "SubgraphRunStream", "SubgraphStatus", "SubgraphTransformer", "TasksTransformer",
    "UpdatesTransformer",
)  # fmt: skip
