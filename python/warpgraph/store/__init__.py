"""Long-term memory stores shared across threads (LangGraph's `langgraph.store` API).

`warpgraph.store.base`: the `BaseStore` interface, items and operations;
`warpgraph.store.memory`: `InMemoryStore`; `warpgraph.store.sqlite` / `warpgraph.store.postgres`:
SQL stores (one query builder, `warpgraph.store._sql`, shared by both).
"""
