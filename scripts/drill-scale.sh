#!/usr/bin/env bash
# `npm run drill:scale`: installs what the drill needs from Debian's packages when missing
# (PostgreSQL 15 for the primary and its streaming replica, Redis), then runs scripts/drill-scale.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
[[ -x /usr/lib/postgresql/15/bin/postgres ]] || need+=(postgresql-15)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [[ ${#need[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then echo "the drill needs: ${need[*]} (apt-get install as root)" >&2; exit 2; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then useradd --system postgres; fi
exec npx tsx scripts/drill-scale.ts
