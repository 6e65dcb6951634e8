#!/usr/bin/env bash
# Builds llama.cpp's native llama-server (continuous batching, -np N slots) from the
# llama-cpp-python source distribution, into a cache outside the repository, once.
# Prints the path of the llama-server binary on stdout; progress goes to stderr.
#
# The first build takes about 8 minutes on 2 cores. It runs in its own process group,
# and an interrupted build (Ctrl-C, a killed test run, a timeout) takes the whole
# group with it: pip, cmake and the compilers beneath them never run on as orphans.
# A lock file makes two builds at once wait for each other instead of both building.
#
# FANOUT_SKIP_LLAMA=1: build nothing (the real-engine tests skip themselves too).
set -euo pipefail
if [ "${FANOUT_SKIP_LLAMA:-}" = "1" ]; then
    echo "llama-server: FANOUT_SKIP_LLAMA=1, not building" >&2
    exit 0
fi
CACHE="${FANOUT_LLAMA_CACHE:-$HOME/.cache/fanout/llama-cpp}"
VERSION="${FANOUT_LLAMA_VERSION:-0.3.36}"
VENV="$CACHE/venv-$VERSION"
find_server() { find "$VENV" -path '*/site-packages/bin/llama-server' -type f 2>/dev/null | head -1; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
flock 9  # another build of the same cache finishes first; then we find its binary

SERVER="$(find_server || true)"
if [ -n "$SERVER" ]; then
    echo "$SERVER"
    exit 0
fi

LOG="$CACHE/build-$VERSION.log"
echo "llama-server: building llama-cpp-python $VERSION into $CACHE (one time, about 8 minutes on 2 cores; log: $LOG)" >&2
rm -rf "$VENV"
start=$SECONDS
build() {
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
    CMAKE_ARGS="-DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_TOOLS_INSTALL=ON -DLLAVA_BUILD=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF" \
        "$VENV/bin/pip" install -q --no-cache-dir "llama-cpp-python==$VERSION"
}
# setsid: the build leads its own process group, so one signal reaches all of it.
export -f build
export VENV VERSION
setsid bash -c build >"$LOG" 2>&1 &
pid=$!
cleanup() {
    if kill -0 "$pid" 2>/dev/null; then
        echo "llama-server: build interrupted after $((SECONDS - start)) s; stopping it" >&2
        kill -TERM -- "-$pid" 2>/dev/null || true
        sleep 2
        kill -KILL -- "-$pid" 2>/dev/null || true
        rm -rf "$VENV"  # half a build is no build
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 30); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "llama-server: still building, $((SECONDS - start)) s so far" >&2
    fi
done
if ! wait "$pid"; then
    echo "llama-server: build failed after $((SECONDS - start)) s; the end of $LOG:" >&2
    tail -30 "$LOG" >&2
    exit 1
fi
trap - EXIT
SERVER="$(find_server)"
if [ -z "$SERVER" ]; then
    echo "llama-server: the build finished but left no llama-server binary (see $LOG)" >&2
    exit 1
fi
echo "llama-server: built in $((SECONDS - start)) s" >&2
echo "$SERVER"
