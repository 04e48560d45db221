#!/usr/bin/env bash
# Regenerates templ code (with the templ version go.mod pins) and fails when
# the result differs from what is committed — the check templ's CI/CD guide
# recommends. On a clean clone it changes nothing.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
go tool templ generate -log-level error
if ! git diff --quiet -- '*_templ.go' || [ -n "$(git status --porcelain --untracked-files=all -- '*_templ.go')" ]; then
  echo "generated templ code differs from what is committed: commit the regenerated views/*_templ.go" >&2
  git status --short -- '*_templ.go' >&2
  git --no-pager diff --stat -- '*_templ.go' >&2
  exit 1
fi
echo "templ code up to date"
