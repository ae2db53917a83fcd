#!/usr/bin/env bash
# `npm test`: system packages, build (which is also the type check of the product code),
# type check of tests and benches, formatting and import order, lint, then every vitest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Node every step below runs on: npm puts the pinned runtime's bin first (scripts/setup.sh).
echo "node $(node --version) ($(command -v node))"
bash scripts/ensure-system-packages.sh
npm run --silent build
npx --no-install tsc -p tsconfig.json --noEmit
npm run --silent format:check
npx --no-install eslint .
npx --no-install vitest run "$@"
