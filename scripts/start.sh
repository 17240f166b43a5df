#!/bin/sh
# How the service is launched: by `npm start`, by the image's CMD, and by the benchmarks and
# drill-scale (scripts/start-command.ts). Node's flags live here, once; arguments add more
# (the image's --enable-source-maps, a benchmark's profiler). `exec`, so the process is node's
# own: it receives the signals, and its pid is the one a benchmark samples. Run from anywhere: it
# starts in the project's folder, where `npm start` runs it.
#   --max-semi-space-size=8    young generation of 8 MB (docs/decisions/foundation.md)
#   --heap-growing-percent=100 the old space grows by at most its own size (same page)
cd "$(dirname "$0")/.." || exit 1
exec node --max-semi-space-size=8 --heap-growing-percent=100 "$@" dist/main.js
