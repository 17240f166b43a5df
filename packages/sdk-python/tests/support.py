"""Shared by the tests: the package on sys.path, the integration settings, a scripted stub server."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(TESTS_DIR)
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_DIR))
if PACKAGE_DIR not in sys.path:
    sys.path.insert(0, PACKAGE_DIR)

BASE_URL = os.environ.get('LOYALTY_BASE_URL')
API_KEY = os.environ.get('LOYALTY_API_KEY')
SKIP_REASON = ('integration tests need a running service: set LOYALTY_BASE_URL and LOYALTY_API_KEY '
               '(a sandbox tenant key with the admin scope); `npm test -- test/python-sdk.test.ts` does it for you')


def integration(cls):
    """Skips the class when no service is named (a clear message), or fails when one must be (the Node test)."""
    if BASE_URL and API_KEY:
        return cls
    if os.environ.get('LOYALTY_REQUIRE_INTEGRATION'):
        raise RuntimeError('LOYALTY_REQUIRE_INTEGRATION is set but LOYALTY_BASE_URL or LOYALTY_API_KEY is not')
    return unittest.skip(SKIP_REASON)(cls)


def load_module(name: str, path: str):
    """Imports a script of the package (the generator, the build backend) that is not on the path."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unique(prefix: str) -> str:
    return f'{prefix}-{uuid.uuid4().hex[:12]}'


class StubServer:
    """A local http.server answering from a script: each entry (status, headers, body) answers one request,
    the last one repeats. Every request is recorded (method, path, headers, body)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                stub.requests.append({'method': self.command, 'path': self.path, 'headers': dict(self.headers.items()),
                                      'body': json.loads(raw) if raw else None})
                entry = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if callable(entry):
                    entry = entry(self)
                    if entry is None:
                        return
                status, headers, body = entry
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header('Content-Type', 'application/json')
                    self.send_header('Content-Length', str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
