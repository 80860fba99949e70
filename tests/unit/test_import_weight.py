"""What importing warpgraph pulls in."""

import subprocess
import sys


def test_importing_the_engine_does_not_import_the_server_sdk():
    """langgraph-sdk (an HTTP client) is imported only when a server user is checked."""
    code = (
        "import sys, warpgraph.graph, warpgraph.pregel, warpgraph.runtime as r\n"
        "print(any(n.startswith('langgraph_sdk') for n in sys.modules))\n"
        "r.BaseUser\n"
        "print(r.BaseUser.__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    assert out == ["False", "BaseUser"]  # (its own protocol: structural, as the SDK's)


def test_base_user_answers_isinstance_as_the_sdks_protocol():
    sdk = __import__("pytest").importorskip("langgraph_sdk.auth.types")
    from warpgraph.runtime import BaseUser

    class User:
        is_authenticated = True
        display_name = identity = "ann"
        permissions = ()

        def __getitem__(self, key):
            return getattr(self, key)

        def __contains__(self, key):
            return hasattr(self, key)

        def __iter__(self):
            return iter(())

    for obj in (User(), sdk.StudioUser("ann"), object(), {"identity": "x"}):
        assert isinstance(obj, BaseUser) == isinstance(obj, sdk.BaseUser)
