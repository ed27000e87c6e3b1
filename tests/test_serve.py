"""The server entry point (`python -m cardroom.serve`): Daphne's command line on uvloop's loop."""

import asyncio
import subprocess
import sys

import pytest

from cardroom import serve

uvloop = pytest.importorskip("uvloop")


def run_main(monkeypatch, argv):
    """Run `serve.main` with Daphne's command line replaced; returns the loop policy and argv Daphne saw."""
    from daphne import cli

    seen = {}

    def entrypoint(cls):
        seen["policy"] = asyncio.get_event_loop_policy()
        seen["argv"] = list(sys.argv)

    monkeypatch.setattr(cli.CommandLineInterface, "entrypoint", classmethod(entrypoint))
    monkeypatch.setattr(sys, "argv", argv)
    previous = asyncio.get_event_loop_policy()
    try:
        serve.main()
    finally:
        asyncio.set_event_loop_policy(previous)
    return seen


def test_daphne_gets_uvloop_and_its_command_line_unchanged(monkeypatch):
    monkeypatch.delenv("UVLOOP", raising=False)
    argv = ["serve.py", "-b", "127.0.0.1", "-p", "8123", "cardroom.asgi:application"]
    seen = run_main(monkeypatch, argv)
    assert isinstance(seen["policy"], uvloop.EventLoopPolicy)
    assert seen["argv"] == ["daphne", *argv[1:]]


def test_uvloop_0_keeps_asyncio_loop(monkeypatch):
    monkeypatch.setenv("UVLOOP", "0")
    seen = run_main(monkeypatch, ["serve.py", "cardroom.asgi:application"])
    assert not isinstance(seen["policy"], uvloop.EventLoopPolicy)
    assert serve.loop_factory() is None


def test_the_load_tester_gets_uvloop(monkeypatch):
    monkeypatch.delenv("UVLOOP", raising=False)
    loop = serve.loop_factory()()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()


def test_a_served_process_runs_twisted_on_uvloop():
    """In a real process: importing Daphne's server after the entry point's policy puts Twisted's reactor on
    a uvloop loop (Daphne makes its loop at import)."""
    script = (
        "import asyncio, sys, uvloop\n"
        "from cardroom import serve\n"
        "asyncio.set_event_loop_policy(serve.uvloop_module().EventLoopPolicy())\n"
        "import daphne.server\n"
        "from twisted.internet import reactor\n"
        "print(type(reactor._asyncioEventloop).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("uvloop")
