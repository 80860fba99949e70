"""Checkpoint savers and serializers (interchangeable with `langgraph.checkpoint`)."""
