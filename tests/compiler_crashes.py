"""A fixture for tests of what happens when IREE's compiler crashes (einc.backend.iree_compile)."""
import os
import signal

import pytest

from einc.backend import iree_compile


@pytest.fixture
def next_compiler_crashes(monkeypatch):
    """The next build's compiler process dies of SIGSEGV before it answers; later ones are sound.
    Yields the list of the flags each build asked for."""
    take, asked = iree_compile._SERVERS.take, []

    def crashing_take():
        server = take()
        if not asked:
            os.kill(server.process.pid, signal.SIGSEGV)
            server.process.wait()
        ask = server.ask
        server.ask = lambda request: (asked.append(request.flags), ask(request))[1]
        return server
    monkeypatch.setattr(iree_compile._SERVERS, "take", crashing_take)
    yield asked
