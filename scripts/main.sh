#!/usr/bin/env bash
# The main job, with its own set-up: an offline improvement campaign on the embedded defaults.
# Re-running resumes the campaign in the same directory (or reports it when it is done).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-runs/campaign}"
if [ -f "$out/header.json" ]; then
  .venv/bin/duplexagent campaign resume "$out"
else
  .venv/bin/duplexagent campaign run --out "$out"
fi
.venv/bin/duplexagent campaign status "$out"
.venv/bin/duplexagent archive plot "$out" --out "$out/staircase.png"
.venv/bin/duplexagent report "$out" --out "$out/report.html"
