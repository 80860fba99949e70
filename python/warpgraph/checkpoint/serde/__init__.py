"""Serializers for checkpoints and writes (`langgraph.checkpoint.serde` compatible)."""
