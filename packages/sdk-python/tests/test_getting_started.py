"""docs/getting-started-python.md, run: every ```sh and ```python block in order (the python
blocks in one namespace, as one session would), each compared with the ```text block that follows
it, if any. A block after `<!-- run: background -->` is the webhook receiver: it runs in a thread,
on a free PORT, with the secret of the destination the page registered."""
from __future__ import annotations

import builtins
import contextlib
import io
import os
import re
import socket
import subprocess
import threading
import time
import unittest

import support

PAGE = os.path.join(support.REPO_ROOT, 'docs', 'getting-started-python.md')
FENCE = re.compile(r'(<!-- run: background -->\s*)?^```(\w+)\n(.*?)^```\n', re.S | re.M)


def blocks():
    """[(language, code, expected output or None, background)] in page order."""
    with open(PAGE, encoding='utf-8') as handle:
        text = handle.read()
    found = [(m.group(2), m.group(3), bool(m.group(1)), m.start(), m.end()) for m in FENCE.finditer(text)]
    out = []
    for i, (language, code, background, _, end) in enumerate(found):
        if language == 'text':
            continue
        expected = None
        if i + 1 < len(found) and found[i + 1][0] == 'text' and text[end:found[i + 1][3]].strip() == '':
            expected = found[i + 1][1]
        out.append((language, code, expected, background))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class PageShapeTest(unittest.TestCase):
    def test_the_page_has_the_steps_and_every_output_follows_a_block(self):
        found = blocks()
        languages = [language for language, _, _, _ in found]
        self.assertEqual(set(languages), {'sh', 'python'}, 'only sh and python blocks (each one run here), and text outputs')
        self.assertGreaterEqual(languages.count('python'), 7)
        self.assertEqual(sum(1 for *_, background in found if background), 1)
        with open(PAGE, encoding='utf-8') as handle:
            text = handle.read()
        self.assertEqual(text.count('```text'), sum(1 for _, _, expected, _ in found if expected is not None),
                         'every ```text block follows the block whose output it shows')


@support.integration
class GettingStartedTest(unittest.TestCase):
    def test_every_block_of_the_page_runs_and_prints_what_the_page_shows(self):
        saved = {k: os.environ.get(k) for k in ('PORT', 'LOYALTY_WEBHOOK_SECRET')}
        os.environ['PORT'] = str(free_port())
        namespace = {'__name__': 'getting_started'}
        receiver = {'__name__': 'receiver', 'lines': []}
        receiver['print'] = lambda *args, **kwargs: receiver['lines'].append(' '.join(str(a) for a in args))
        thread = None
        try:
            for number, (language, code, expected, background) in enumerate(blocks(), 1):
                where = f'docs/getting-started-python.md block {number} ({language})'
                if language == 'sh':
                    env = dict(os.environ)
                    env.pop('PYTHONPATH', None)
                    done = subprocess.run(['bash', '-euo', 'pipefail', '-c', code], cwd=support.REPO_ROOT, env=env,
                                          capture_output=True, text=True, timeout=60)
                    self.assertEqual(done.returncode, 0, f'{where} failed:\n{code}\n{done.stdout}{done.stderr}')
                    printed = done.stdout
                elif background:
                    os.environ['LOYALTY_WEBHOOK_SECRET'] = namespace['destination']['secret']
                    errors = []

                    def serve():
                        try:
                            exec(compile(code, where, 'exec'), receiver)
                        except Exception as error:  # noqa: BLE001
                            errors.append(error)
                    thread = threading.Thread(target=serve, daemon=True)
                    thread.start()
                    deadline = time.time() + 10
                    while 'server' not in receiver and not errors and time.time() < deadline:
                        time.sleep(0.01)
                    self.assertFalse(errors, f'{where} failed: {errors}')
                    self.assertIn('server', receiver, f'{where} did not start its server')
                    continue
                else:
                    captured = io.StringIO()
                    with contextlib.redirect_stdout(captured):
                        try:
                            exec(compile(code, where, 'exec'), namespace)
                        except Exception as error:
                            self.fail(f'{where} raised {type(error).__name__}: {error}\n{code}')
                    printed = captured.getvalue()
                if expected is not None:
                    self.assertEqual(printed.rstrip('\n'), expected.rstrip('\n'), f'{where} printed something else than the page shows')
            self.assertIsNotNone(thread, 'the page has a receiver')
            self.assertEqual(receiver['lines'], ['points.awarded.v1 test_participant True'])
        finally:
            if 'server' in receiver:
                receiver['server'].shutdown()
                receiver['server'].server_close()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


if __name__ == '__main__':
    unittest.main()
