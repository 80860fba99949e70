"""Private helpers of warpgraph. Nothing here is public API."""
