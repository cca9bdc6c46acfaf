#!/usr/bin/env bash
# Prints Countersign's performance figures (launch to an interactive inbox,
# idle memory of all app processes with 1,000 sessions, opening a 200-line
# offer) measured on the real app under Xvfb. Not part of CI: figures are
# printed, not asserted. By default it measures a release build of the app;
# COUNTERSIGN_APP=path measures another binary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${COUNTERSIGN_APP:-}" ]; then
  npm --prefix ui run build
  cargo build --release -p countersign
  COUNTERSIGN_APP="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/countersign"
  export COUNTERSIGN_APP
fi
COUNTERSIGN_E2E_TARGET=perf exec bash tests/e2e.sh --nocapture
