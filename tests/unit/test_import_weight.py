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
    assert out == ["False", "BaseUser"]
