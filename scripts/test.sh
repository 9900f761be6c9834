#!/usr/bin/env bash
# The test suite, with its own set-up. Exit code is pytest's (5 = no tests ran = failure).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -p no:cacheprovider "$@"
