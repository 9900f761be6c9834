#!/usr/bin/env bash
# Set-up for a fresh machine (Debian, Python 3.11): system packages, a .venv, the project in it.
# Safe to run twice: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

if ! command -v espeak-ng >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: installing espeak-ng" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq espeak-ng >/dev/null
  else
    echo "setup: espeak-ng missing and not root; speech rendering will be unavailable" >&2
  fi
fi

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: installing bubblewrap (the jail of module hosts and editors)" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "setup: bubblewrap missing and not root; campaigns refuse command/litellm editors unless sandbox = \"rlimits\"" >&2
  fi
fi

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    echo "setup: installing chromium (headless, to check the campaign report page)" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: chromium missing and not root; the report's browser test will be skipped" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  python3 -m venv .venv
fi

stamp=".venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: installing packages into .venv (first run takes a few minutes)" >&2
  quiet .venv/bin/pip install -q --upgrade pip
  # torch first and pinned: the local CPU build (an unpinned torch pulls several GB of CUDA packages)
  quiet .venv/bin/pip install -q "torch==2.13.0"
  quiet .venv/bin/pip install -q -e ".[all,test]"
  rm -f .venv/.installed-*
  touch "$stamp"
fi
