"""The Files and Batch APIs of the simulator: ``/v1/files`` and ``/v1/batches``.

Shapes as OpenAI's: a file object (``{"id": "file-...", "object": "file", "bytes",
"created_at", "filename", "purpose", "status": "processed"}``), a batch object
(``{"id": "batch_...", "object": "batch", "status", "request_counts", "output_file_id",
"error_file_id", ...}``), and output lines ``{"id", "custom_id", "response":
{"status_code", "request_id", "body"}, "error"}``.

A batch's life is computed from the clock whenever it is read (no task runs it):
``validating`` for ``SimConfig.batch_validate_s``, ``in_progress`` until
``batch_completion_s`` after its creation, ``finalizing`` for ``batch_finalize_s``,
then ``completed`` (model seconds, run ``time_scale`` times faster). Validation fails
the whole batch (``failed``, with ``errors``) for a line that is no request, a repeated
``custom_id``, another endpoint or another model than the first line's, or more than
``batch_max_requests`` lines or ``batch_max_bytes`` bytes. The first
``batch_expiries`` batches created expire at ``batch_window_s`` instead (when
``batch_completion_s`` exceeds the window any batch does): the requests done by then
are in the output file, the others in the error file with code ``batch_expired``. Each
request fails on its own with probability ``batch_failure_rate`` (a 500 in the error
file). Answers are what ``/v1/chat/completions`` would say, composed at once. The lines
``batch_damaged_lines`` names in the first batch's output file are written damaged (cut
short, or JSON that is no object), as a provider's file may come back.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._api import CHAT, Parsed
from ._config import SimConfig
from ._http import Request, Responder
from ._prompt import definition_tokens, read_prompt
from ._text import count_tokens

__all__ = ["BatchStore"]

_ENDPOINTS = ("/v1/chat/completions",)


def _error(message: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def _damage(text: str, damage: str) -> str:
    """An output line ``text`` damaged as ``damage`` (``BATCH_LINE_DAMAGE``) says."""
    if damage == "torn":  # cut after its custom_id, as a file cut short
        return text[: text.index('"response"') + len('"response"')]
    return {"array": "[1, 2]", "string": '"str"', "null": "null"}[damage]


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str] | None
    created: float  # server clock, wall seconds
    created_at: int
    expires: bool
    damaged: Mapping[int, str] = field(default_factory=dict)
    """Lines of its output file written damaged (``SimConfig.batch_damaged_lines``)."""
    lines: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    cancelled: bool = False
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: tuple[int, int, int] = (0, 0, 0)  # total, completed, failed
    final: str | None = None  # the end state once reached


class BatchStore:
    """Files and batches of one simulator (see the module docstring)."""

    def __init__(self, config: SimConfig, now: Callable[[], float]) -> None:
        self.config = config
        self._now = now
        self.files: dict[str, _File] = {}
        self.batches: dict[str, _Batch] = {}
        self.submitted: Counter[str] = Counter()
        """How many times each ``custom_id`` was submitted in a batch that passed validation."""
        self.uploads = 0
        """Files uploaded (``POST /v1/files``), the ones whose upload was cut included."""
        self.downloads = 0
        self.download_requests = 0
        """Requests for a file's content, the ones cut before it came back included."""
        """File contents served whole (``GET /v1/files/{id}/content``)."""
        self._dice = random.Random(config.seed + 1)

    # --- routing ----------------------------------------------------------------------
    async def handle(self, request: Request, out: Responder) -> None:
        path = request.path.removeprefix("/v1")
        parts = [p for p in path.split("/") if p]
        method = request.method
        if parts[:1] == ["files"]:
            if method == "POST" and len(parts) == 1:
                await self._upload(request, out)
                return
            if method == "GET" and len(parts) == 1:
                data = [f.as_dict() for f in self.files.values()]
                await out.send_json(200, {}, {"object": "list", "data": data, "has_more": False})
                return
            file = self.files.get(parts[1]) if len(parts) > 1 else None
            if file is None:
                await out.send_json(404, {}, _error(f"No such File object: {path}", "not_found"))
                return
            if method == "GET" and len(parts) == 2:
                await out.send_json(200, {}, file.as_dict())
                return
            if method == "GET" and parts[2:] == ["content"]:
                self.download_requests += 1
                await self._sleep(self.config.file_download_s)
                self.downloads += 1
                await out.send(200, {"content-type": "application/octet-stream"}, file.data)
                return
        if parts[:1] == ["batches"]:
            if method == "POST" and len(parts) == 1:
                await self._create(request, out)
                return
            if method == "GET" and len(parts) == 1:
                data = [self._object(b) for b in reversed(self.batches.values())]
                await out.send_json(
                    200,
                    {},
                    {
                        "object": "list",
                        "data": data,
                        "has_more": False,
                        "first_id": data[0]["id"] if data else None,
                        "last_id": data[-1]["id"] if data else None,
                    },
                )
                return
            batch = self.batches.get(parts[1]) if len(parts) > 1 else None
            if batch is None:
                await out.send_json(
                    404, {}, _error(f"No batch found with id '{parts[1:]}'", "not_found")
                )
                return
            if method == "GET" and len(parts) == 2:
                await out.send_json(200, {}, self._object(batch))
                return
            if method == "POST" and parts[2:] == ["cancel"]:
                if self._status(batch) in ("validating", "in_progress"):
                    batch.cancelled = True
                    self._finish(batch, "cancelled", done_share=0.0)
                await out.send_json(200, {}, self._object(batch))
                return
        await out.send_json(404, {}, _error(f"no route {method} {request.path}"))

    async def _sleep(self, model_s: float) -> None:
        if model_s > 0:
            await asyncio.sleep(self.config.scaled(model_s))

    # --- files ------------------------------------------------------------------------
    async def _upload(self, request: Request, out: Responder) -> None:
        self.uploads += 1
        ctype = request.headers.get("content-type", "")
        head = f"Content-Type: {ctype}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.body)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts() if message.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename(), payload)
        if "file" not in fields or "purpose" not in fields:
            await out.send_json(400, {}, _error("'file' and 'purpose' are required", None, "file"))
            return
        await self._sleep(self.config.file_upload_s)  # a slow upload: a kill lands in it
        filename, data = fields["file"]
        file = _File(
            id=f"file-{uuid.uuid4().hex[:24]}",
            filename=filename or "upload",
            purpose=fields["purpose"][1].decode(),
            data=data,
            created_at=int(time.time()),
        )
        self.files[file.id] = file
        await out.send_json(200, {}, file.as_dict())

    def _store(
        self, name: str, lines: list[dict[str, Any]], damaged: Mapping[int, str] | None = None
    ) -> str:
        texts = [json.dumps(line, separators=(",", ":")) for line in lines]
        for number, damage in (damaged or {}).items():
            if number <= len(texts):
                texts[number - 1] = _damage(texts[number - 1], damage)
        data = "".join(text + "\n" for text in texts)
        file = _File(
            id=f"file-{uuid.uuid4().hex[:24]}",
            filename=name,
            purpose="batch_output",
            data=data.encode(),
            created_at=int(time.time()),
        )
        self.files[file.id] = file
        return file.id

    # --- batches ----------------------------------------------------------------------
    async def _create(self, request: Request, out: Responder) -> None:
        try:
            payload = json.loads(request.body or b"null")
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            await out.send_json(400, {}, _error("request body must be a JSON object"))
            return
        file = self.files.get(str(payload.get("input_file_id")))
        if file is None or file.purpose != "batch":
            await out.send_json(
                400,
                {},
                _error(
                    "input_file_id must name a file uploaded with purpose 'batch'",
                    None,
                    "input_file_id",
                ),
            )
            return
        endpoint = payload.get("endpoint")
        if endpoint not in _ENDPOINTS:
            await out.send_json(
                400, {}, _error(f"unsupported endpoint {endpoint!r}", None, "endpoint")
            )
            return
        if payload.get("completion_window") != "24h":
            await out.send_json(
                400, {}, _error("completion_window must be '24h'", None, "completion_window")
            )
            return
        metadata = payload.get("metadata")
        created = len(self.batches)
        batch = _Batch(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            input_file_id=file.id,
            endpoint=endpoint,
            completion_window="24h",
            metadata=metadata if isinstance(metadata, dict) else None,
            created=self._now(),
            created_at=int(time.time()),
            expires=created < self.config.batch_expiries,
            damaged=self.config.batch_damaged_lines if created == 0 else {},
        )
        self._validate(batch, file.data)
        if not batch.errors:
            self.submitted.update(str(line["custom_id"]) for line in batch.lines)
        self.batches[batch.id] = batch
        await out.send_json(200, {}, self._object(batch))

    def _validate(self, batch: _Batch, data: bytes) -> None:
        cfg = self.config
        seen: set[str] = set()

        def refuse(line: int | None, code: str, message: str) -> None:
            batch.errors.append({"code": code, "line": line, "message": message, "param": None})

        if len(data) > cfg.batch_max_bytes:
            refuse(
                None,
                "file_too_large",
                f"the input file has {len(data)} bytes; the most is {cfg.batch_max_bytes}",
            )
            return
        for number, raw in enumerate(data.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                refuse(number, "invalid_json_line", "this line is not valid JSON")
                continue
            body = line.get("body") if isinstance(line, dict) else None
            custom_id = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(custom_id, str) or not isinstance(body, dict):
                refuse(number, "invalid_request", "a line needs a custom_id and a body")
                continue
            if custom_id in seen:
                refuse(number, "duplicate_custom_id", f"custom_id {custom_id!r} is repeated")
            seen.add(custom_id)
            if line.get("method") != "POST" or line.get("url") != batch.endpoint:
                refuse(number, "invalid_url", f"the url must be {batch.endpoint} (POST)")
            model = body.get("model")
            if batch.model is None:
                batch.model = model
            elif model != batch.model:
                refuse(
                    number,
                    "mismatched_model",
                    "every request of a batch must use the "
                    f"same model: {model!r} is not {batch.model!r}",
                )
            batch.lines.append(line)
        if len(batch.lines) > cfg.batch_max_requests:
            refuse(
                None,
                "too_many_requests",
                f"the input file has {len(batch.lines)} "
                f"requests; the most is {cfg.batch_max_requests}",
            )

    def _status(self, batch: _Batch) -> str:
        if batch.final is not None:
            return batch.final
        cfg = self.config
        age = self._now() - batch.created
        if age < cfg.scaled(cfg.batch_validate_s):
            return "validating"
        if batch.errors:
            self._finish(batch, "failed", done_share=0.0)
            return "failed"
        expires = batch.expires or cfg.batch_completion_s > cfg.batch_window_s
        if expires:
            if age < cfg.scaled(cfg.batch_window_s):
                return "in_progress"
            share = min(1.0, cfg.batch_window_s / max(cfg.batch_completion_s, 1e-9))
            self._finish(batch, "expired", done_share=0.5 if batch.expires else share)
            return "expired"
        if age < cfg.scaled(cfg.batch_completion_s):
            return "in_progress"
        if age < cfg.scaled(cfg.batch_completion_s + cfg.batch_finalize_s):
            return "finalizing"
        self._finish(batch, "completed", done_share=1.0)
        return "completed"

    def _finish(self, batch: _Batch, status: str, *, done_share: float) -> None:
        """Answer the batch's requests (the first ``done_share`` of them) and write its
        output and error files."""
        batch.final = status
        if status == "failed":
            batch.counts = (len(batch.lines), 0, 0)
            return
        done = round(len(batch.lines) * done_share)
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for i, line in enumerate(batch.lines):
            rid = f"batch_req_{uuid.uuid4().hex[:24]}"
            if i >= done:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append(
                    {
                        "id": rid,
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {
                            "code": code,
                            "message": "This request could not be "
                            f"executed before the batch was {status}.",
                        },
                    }
                )
                continue
            status_code, body = self._answer(line["body"])
            if status_code == 200 and self._dice.random() < self.config.batch_failure_rate:
                status_code = 500
                body = {
                    "error": {
                        "message": "simulated batch item failure",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                }
            entry = {
                "id": rid,
                "custom_id": line["custom_id"],
                "response": {"status_code": status_code, "request_id": rid, "body": body},
                "error": None,
            }
            (outputs if status_code == 200 else errors).append(entry)
        if outputs:
            batch.output_file_id = self._store(f"{batch.id}_output.jsonl", outputs, batch.damaged)
        if errors:
            batch.error_file_id = self._store(f"{batch.id}_error.jsonl", errors)
        batch.counts = (len(batch.lines), len(outputs), len(errors))

    def _answer(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """What ``/v1/chat/completions`` answers to ``payload`` (no timing, no limits)."""
        unknown = sorted(set(payload) - CHAT.known)
        if unknown or payload.get("stream"):
            name = unknown[0] if unknown else "stream"
            return 400, _error(
                f"Unrecognized request argument supplied: {name}", "unknown_parameter", name
            )
        parsed = CHAT.read(payload, self.config.supports_response_format)
        if not isinstance(parsed, Parsed):
            return 400, parsed
        prompt, question, prompt_tokens = read_prompt(parsed.messages)
        prompt_tokens += definition_tokens(payload)
        reply = CHAT.compose(parsed, prompt, question, self.config.answer_tokens)
        completion = count_tokens(reply.text) * parsed.n
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        body = CHAT.body(parsed, reply, usage)
        body["service_tier"] = "default"
        return 200, body

    def _object(self, batch: _Batch) -> dict[str, Any]:
        status = self._status(batch)
        total, completed, failed = batch.counts if batch.final else (len(batch.lines), 0, 0)
        if status == "in_progress":  # requests answered as time passes
            cfg = self.config
            age = self._now() - batch.created - cfg.scaled(cfg.batch_validate_s)
            span = cfg.scaled(max(cfg.batch_completion_s - cfg.batch_validate_s, 1e-9))
            completed = min(total, int(total * max(0.0, age) / span))
        errors = {"object": "list", "data": batch.errors} if batch.errors else None
        stamp = int(time.time())
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": errors,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": batch.created_at,
            "in_progress_at": batch.created_at if status != "validating" else None,
            "expires_at": batch.created_at + 86_400,
            "finalizing_at": stamp if status in ("finalizing", "completed") else None,
            "completed_at": stamp if status == "completed" else None,
            "failed_at": stamp if status == "failed" else None,
            "expired_at": stamp if status == "expired" else None,
            "cancelling_at": None,
            "cancelled_at": stamp if status == "cancelled" else None,
            "request_counts": {"total": total, "completed": completed, "failed": failed},
            "metadata": batch.metadata,
            "model": batch.model,
        }
