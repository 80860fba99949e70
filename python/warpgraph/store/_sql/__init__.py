"""The SQL stores' shared core: dialect fragments (`dialect`), filters compiled to bound
SQL (`filters`), and the batch step machine (`plan`) that SqliteStore, AsyncSqliteStore,
PostgresStore and AsyncPostgresStore all run through their own executors."""
