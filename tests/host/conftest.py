# SPDX-License-Identifier: MIT
"""Tests of the host package and the repository's generated files: no
QEMU, no build (run: /usr/bin/python3 -m pytest -q tests/host)."""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'host'))
