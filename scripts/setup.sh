#!/usr/bin/env bash
# One-time (and repeatable) set-up: system packages, a .venv, and the project installed into it.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v espeak-ng >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq >/dev/null && apt-get install -y -qq espeak-ng >/dev/null
  else
    echo "setup: espeak-ng is missing and not running as root; speech rendering tests will be skipped" >&2
  fi
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/pip install -q --upgrade pip
  # torch first, pinned: the local CPU build; an unpinned torch pulls CUDA packages.
  .venv/bin/pip install -q "torch==2.13.0"
  .venv/bin/pip install -q -e ".[all,test]"
  rm -f .venv/.installed-*
  touch "$stamp"
fi
