"""Every registered scenario: reference langgraph vs the target, per API, sync and async."""

from . import scenarios_all  # noqa: F401 - registers the scenarios
from .harness import comparison_tests

test_sync, test_async = comparison_tests()
