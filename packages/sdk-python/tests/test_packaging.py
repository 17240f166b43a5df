"""The package builds and installs without a package index: pyproject.toml names no dependency and
no build requirement, its build backend (_build/loyalty_build.py) is in the standard library."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

import support

BACKEND = os.path.join(support.PACKAGE_DIR, '_build', 'loyalty_build.py')


def backend():
    return support.load_module('loyalty_build', BACKEND)


class PackagingTest(unittest.TestCase):
    def test_pyproject_has_no_dependencies_and_no_build_requirements(self):
        with open(os.path.join(support.PACKAGE_DIR, 'pyproject.toml'), encoding='utf-8') as handle:
            text = handle.read()
        self.assertIn('requires = []', text)
        self.assertIn('dependencies = []', text)
        self.assertIn('requires-python = ">=3.9"', text)
        import loyalty_sdk
        self.assertIn(f'version = "{loyalty_sdk.__version__}"', text)
        self.assertEqual(backend().VERSION, loyalty_sdk.__version__)

    def test_the_wheel_holds_the_package_and_imports_from_it(self):
        with tempfile.TemporaryDirectory() as directory:
            name = backend().build_wheel(directory)
            path = os.path.join(directory, name)
            with zipfile.ZipFile(path) as wheel:
                names = set(wheel.namelist())
                for module in ('__init__.py', '_client.py', '_errors.py', '_generated.py', 'webhooks.py', 'py.typed'):
                    self.assertIn(f'loyalty_sdk/{module}', names)
                self.assertIn('loyalty_sdk-0.1.0.dist-info/RECORD', names)
                self.assertIn('Requires-Python: >=3.9', wheel.read('loyalty_sdk-0.1.0.dist-info/METADATA').decode())
            # A wheel is importable as it is (zipimport): only the standard library is needed.
            done = subprocess.run([sys.executable, '-c', 'import loyalty_sdk, sys; print(loyalty_sdk.__file__); '
                                   'loyalty_sdk.Client("http://127.0.0.1:9", api_key="k")'],
                                  env={**os.environ, 'PYTHONPATH': path}, capture_output=True, text=True, cwd=directory, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn(name, done.stdout)

    def test_pip_installs_it_without_an_index(self):
        if importlib.util.find_spec('pip') is None:
            self.skipTest('pip is not installed for this python3 (the wheel test above covers the build)')
        with tempfile.TemporaryDirectory() as directory:
            done = subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-index', '--disable-pip-version-check', '--quiet',
                                   '--target', directory, support.PACKAGE_DIR], capture_output=True, text=True, timeout=240)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertTrue(os.path.exists(os.path.join(directory, 'loyalty_sdk', '_generated.py')))


if __name__ == '__main__':
    unittest.main()
