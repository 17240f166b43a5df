"""A PEP 517 build backend in the standard library, so that `pip install ./packages/sdk-python`
works on a machine that reaches no package index (pyproject.toml: `requires = []`, nothing to
download). It builds a pure-Python wheel of loyalty_sdk and an sdist; no editable installs
(use PYTHONPATH for that)."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = 'loyalty_sdk'
DIST = 'loyalty_sdk'
VERSION = '0.1.0'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = 'py3-none-any'


def _metadata() -> str:
    readme = ''
    path = os.path.join(ROOT, 'README.md')
    if os.path.exists(path):
        with open(path, encoding='utf-8') as handle:
            readme = handle.read()
    return ('Metadata-Version: 2.1\n'
            f'Name: loyalty-sdk\nVersion: {VERSION}\n'
            'Summary: Python SDK of the engagement and loyalty service (standard library only)\n'
            'License: Apache-2.0\nRequires-Python: >=3.9\n'
            'Description-Content-Type: text/markdown\n\n' + readme)


def _package_files():
    base = os.path.join(ROOT, NAME)
    for name in sorted(os.listdir(base)):
        if name.endswith('.py') or name == 'py.typed':
            yield f'{NAME}/{name}', os.path.join(base, name)


def _digest(data: bytes) -> str:
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()


def _dist_info_files():
    dist_info = f'{DIST}-{VERSION}.dist-info'
    return dist_info, {
        f'{dist_info}/METADATA': _metadata().encode('utf-8'),
        f'{dist_info}/WHEEL': f'Wheel-Version: 1.0\nGenerator: loyalty_build\nRoot-Is-Purelib: true\nTag: {TAG}\n'.encode(),
        f'{dist_info}/top_level.txt': f'{NAME}\n'.encode(),
    }


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info, files = _dist_info_files()
    for name, data in files.items():
        target = os.path.join(metadata_directory, *name.split('/'))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, 'wb') as handle:
            handle.write(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = f'{DIST}-{VERSION}-{TAG}.whl'
    dist_info, meta = _dist_info_files()
    entries = []
    for arcname, path in _package_files():
        with open(path, 'rb') as handle:
            entries.append((arcname, handle.read()))
    entries += list(meta.items())
    record = ''.join(f'{name},{_digest(data)},{len(data)}\n' for name, data in entries) + f'{dist_info}/RECORD,,\n'
    entries.append((f'{dist_info}/RECORD', record.encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), 'w', zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = f'{DIST}-{VERSION}'
    filename = f'{base}.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, filename), 'w:gz', format=tarfile.PAX_FORMAT) as archive:
        for relative in ['pyproject.toml', 'README.md', '_build/loyalty_build.py', 'scripts/generate.py'] + [a for a, _ in _package_files()]:
            path = os.path.join(ROOT, *relative.split('/'))
            if os.path.exists(path):
                archive.add(path, arcname=f'{base}/{relative}')
        data = _metadata().encode('utf-8')
        info = tarfile.TarInfo(f'{base}/PKG-INFO')
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return filename
