#!/usr/bin/env bash
# Smoke test of the one-folder build, as a new user's machine would run it: only the folder is
# copied, with an empty home and no Python, virtualenv or source tree on any path it can see.
# The frozen app opens the sample offscreen and writes a screenshot, then judges one answer with
# the embedded model (so llama.cpp's libraries and the GGUF are really in the folder).
set -euo pipefail
BUILD="$(realpath "$1")"
SHOT="$(realpath -m "$2")"
PLACE="$(mktemp -d /tmp/assay-smoke.XXXXXX)"
trap 'rm -rf "$PLACE"' EXIT
cp -a "$BUILD" "$PLACE/Assay"
mkdir "$PLACE/home"
run() {
	(cd "$PLACE" && env -i HOME="$PLACE/home" PATH=/usr/bin:/bin LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen \
		"$PLACE/Assay/assay" --project "$PLACE/home/sample.assay" "$@")
}
run gui --sample --reviewer smoke --open contractnli-027 --screenshot "$PLACE/shot.png"
test "$(stat -c %s "$PLACE/shot.png")" -gt 20000
run judge --answers contractnli-027 --no-missing --name smoke-judge | tail -n 1 | grep -q "1 judged, 0 failed"
mkdir -p "$(dirname "$SHOT")"
cp "$PLACE/shot.png" "$SHOT"
echo ">>> The packaged app opened the sample and judged an answer from a bare copy; screenshot: $SHOT"
