#!/usr/bin/env bash
# Builds llama.cpp's native llama-server (continuous batching, -np N slots) from the
# llama-cpp-python source distribution, into a cache outside the repository, once.
# Prints the path of the llama-server binary. About 4 minutes on 2 cores.
set -euo pipefail
CACHE="${FANOUT_LLAMA_CACHE:-$HOME/.cache/fanout/llama-cpp}"
VERSION="${FANOUT_LLAMA_VERSION:-0.3.36}"
VENV="$CACHE/venv-$VERSION"
find_server() { find "$VENV" -path '*/site-packages/bin/llama-server' -type f 2>/dev/null | head -1; }
SERVER="$(find_server || true)"
if [ -z "$SERVER" ]; then
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip >&2
    CMAKE_ARGS="-DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_TOOLS_INSTALL=ON -DLLAVA_BUILD=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF" \
        "$VENV/bin/pip" install -q --no-cache-dir "llama-cpp-python==$VERSION" >&2
    SERVER="$(find_server)"
fi
echo "$SERVER"
