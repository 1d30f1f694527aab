"""Fixtures for the interop suite: real clients and tools (python3-redis,
redis-cli, redis-benchmark, Redisson's protocol) against latchd and redis-server.

The servers are the integration suite's (tests/integration/conftest.py): its
`server` fixture is imported here, so every test runs twice (ids "redis" and
"latchd"), each server on an ephemeral port, flushed before each test.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(os.path.dirname(HERE), "integration")
sys.path.insert(0, INTEGRATION)


def _load_integration_conftest():
    """tests/integration/conftest.py under another module name: pytest owns
    the name "conftest", and this suite reuses its Server and fixtures."""
    spec = importlib.util.spec_from_file_location(
        "integration_conftest", os.path.join(INTEGRATION, "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_integration = _load_integration_conftest()

# Fixtures re-exported so pytest registers them for this folder.
server_kind = _integration.server_kind
_shared_server = _integration._shared_server
server = _integration.server
r = _integration.r

