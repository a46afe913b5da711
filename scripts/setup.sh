#!/usr/bin/env bash
# Everything the tests need beyond `npm install`, idempotent (root or sudo):
#  - PostgreSQL 15 + pgvector 0.8.0 and the test databases (scripts/setup-postgres.sh);
#  - Debian's Chromium, which the playground's end-to-end tests drive through playwright-core
#    (no browser is downloaded by npm).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-postgres.sh

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
if ! command -v chromium >/dev/null; then
  echo "[setup] installing Debian's chromium for the browser tests"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
echo "[setup] chromium: $(command -v chromium)"
