#!/usr/bin/env bash
# A plain clone as a new user gets it: this repository's HEAD cloned to a fresh folder, then `make install`, the
# README's quick start and tour (serve, ingest, search, import-from, calibrate, examples/coach_a_run.py,
# examples/curl.sh) and the tests that read the dev set, each step timed. Folders named after the target are
# hidden first (root only: an empty read-only tmpfs over each, in a private mount namespace), e.g. the folder the
# dev data used to come from and this checkout itself, so nothing can read them:
#
#     deploy/plain_clone.sh /tmp/clone /work/shared "$PWD"        # EMS_PORT (default 18500) for the server
set -euo pipefail
TARGET=${1:-/tmp/clone}
HIDE=("${@:2}")
SOURCE=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
PORT=${EMS_PORT:-18500}

if [[ ${#HIDE[@]} -gt 0 && -z "${PLAIN_CLONE_NAMESPACE:-}" ]]; then
    exec unshare --mount env PLAIN_CLONE_NAMESPACE=1 "$0" "$@"
fi
rm -rf "$TARGET"
git clone -q "$SOURCE" "$TARGET"
for folder in "${HIDE[@]}"; do
    mount -t tmpfs -o ro,size=4k none "$folder"
    echo "hidden: $folder ($(ls -A "$folder" | wc -l) entries visible)"
done
cd "$TARGET"
git log --oneline -1
T0=$(date +%s)
step() { echo; echo "== [$(( $(date +%s) - T0 )) s] $*"; }

step "make install"
make install > install.log 2>&1 || { tail -40 install.log; exit 1; }
echo "make install: $(( $(date +%s) - T0 )) s"

step "serve (what make serve runs, on port $PORT, in the background)"
HF_HUB_OFFLINE=1 .venv/bin/webcoach serve --port "$PORT" > serve.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 180); do curl -sf "localhost:$PORT/readyz" > /dev/null && break; sleep 1; done
echo "serving $(( $(date +%s) - T0 )) s after the clone"

step "quick start: ingest webcanvas, search"
.venv/bin/webcoach ingest datasets/trajectories/webcanvas.jsonl 2>&1 | grep -v "━\| INFO " || true
curl -s "localhost:$PORT/v1/search" -H 'content-type: application/json' \
     -d '{"text": "add a gift card to the cart", "k": 5, "domain": "amazon.com"}' | cut -c1-200

step "tour: ingest all, import-from, calibrate"
.venv/bin/webcoach ingest datasets/trajectories/*.jsonl 2>&1 | grep -v "━\| INFO " || true
.venv/bin/webcoach import-from browser-use examples/import-from/browser-use --out runs.jsonl
.venv/bin/webcoach ingest runs.jsonl 2>&1 | grep -v "━\| INFO " || true
.venv/bin/webcoach calibrate 2>&1 | grep log_loss || true

step "tour: examples/coach_a_run.py"
EMS_URL=http://127.0.0.1:$PORT .venv/bin/python examples/coach_a_run.py > coach_a_run.out
grep -v "^         " coach_a_run.out | cut -c1-110

step "tour: examples/curl.sh"
EMS_URL=http://127.0.0.1:$PORT bash examples/curl.sh > curl.out
grep -c . curl.out | xargs echo "lines of JSON answers:"; grep '"episode_id"' curl.out

step "tests that read the dev set"
HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/condenser/test_condense.py \
    tests/deploy/test_compose.py 2>&1 | tail -1

step "what the install downloaded"
.venv/bin/python deploy/install_size.py 2>&1 | grep -v WARNING | head -4
echo; echo "total: $(( $(date +%s) - T0 )) s"
