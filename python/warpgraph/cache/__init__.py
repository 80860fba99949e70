"""Node result caches (interchangeable with `langgraph.cache`).

`base.BaseCache` is the interface the run loop talks to; `memory.InMemoryCache`,
`sqlite.SqliteCache` and `redis.RedisCache` implement it. Values go through a checkpoint
serializer (`warpgraph.checkpoint.serde`), so whatever a saver can store a cache can too.
"""
