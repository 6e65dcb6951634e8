"""JSONL jobs through the Batch API (``fanout run --batch``), and the deadline-aware
choice between the Batch API, flex and standard online requests.

A batch job writes its requests (merged where the chosen plan merges) as batch input
files within the provider's limits (``BatchOptions``: 50,000 requests and 200 MB per
file; one model per file), uploads them (``client.files.create(purpose="batch")``),
creates the batches (``client.batches.create``), polls them, downloads their output
and error files, and appends a record per id to the same output journal as an online
job (``mode`` ``"batch"``), mapped back by ``custom_id``.

Every step is recorded in a state directory next to the output (``OUTPUT.batches/``:
``state.json``, and the input file of each batch until it is done), written before
the step is taken (and its shape checked when it is read again: ``_batch_state``), so
a process killed at any point resumes where it was:

* killed while writing or uploading a file: the upload is looked up by its file name
  (``client.files.list``) and adopted, or done again;
* killed between the upload and the batch's creation: the batch is looked up by its
  ``metadata`` (``fanout_chunk``) and adopted, or created;
* killed while a batch runs or while its results come back: it is polled again, its
  files downloaded again, and only the ids the journal does not hold yet are written.

Nothing is submitted twice: a request goes in a new batch only when it has no batch
(or its batch is done and it failed or expired there). Failed and expired requests
are asked again alone: in a follow-up batch if the deadline leaves time for one
(``Policy.batch_expected_s``) and ``BatchOptions.max_rounds`` allows, else online.
The spend caps are kept on each request's worst case (``_batch_cap``, ``_within_cap``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import openai

from ..core import clock
from ..core.exceptions import BudgetExceededError, ConfigError, JobError, QuestionError
from ..core.models import Answer, Question, Usage
from ..core.money import Tier
from ..core.progress import BatchProgress
from ..core.tiers import TierChoice, choose_tier, tier_factor
from ..engine.codec import merged_params
from ..engine.flex import flex_until
from ..engine.intake import messages_for
from ..engine.merging import build_merged
from ..engine.retrying import build_retrying
from ._batch_cap import BatchCap
from ._batch_lines import read_file, read_line
from ._batch_merge import MERGE_FORMAT, UNCHECKED, batch_group_size, warn_unchecked
from ._batch_state import check_state
from ._output import BOM, JobOutput, log
from ._run import (
    BadLine,
    JobSummary,
    _call_request,
    _error_text,
    _parse,
    _record,
    fingerprint,
    run_into,
)
from ._spend import not_sent

T = TypeVar("T")

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["BatchOptions", "choose_job_tier", "run_job"]

_TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
_ENDPOINT: Final = "/v1/chat/completions"


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """How a job uses the Batch API."""

    max_requests: int = 50_000
    """Most requests per batch input file (OpenAI: 50,000)."""
    max_bytes: int = 200 * 1024 * 1024
    """Largest batch input file, in bytes (OpenAI: 200 MB)."""
    poll_s: float = 30.0
    """Seconds between two looks at the running batches."""
    max_rounds: int = 3
    """Batches a request may go through (the first and the follow-ups of its failures)
    before it is asked online."""

    def __post_init__(self) -> None:
        for name in ("max_requests", "max_bytes", "max_rounds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"BatchOptions.{name} must be a positive int, got {value!r}")
        if not isinstance(self.poll_s, (int, float)) or not self.poll_s > 0:
            raise ConfigError(f"BatchOptions.poll_s must be a positive number, got {self.poll_s!r}")


@dataclass
class _Item:
    """One id of the input that needs an answer."""

    qid: str
    line: int
    fp: str
    question: Question


@dataclass
class _State:
    """``OUTPUT.batches/state.json``: the batches of this output, what is in each."""

    path: Path
    deadline_at: float | None = None
    chunks: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, directory: Path) -> _State:
        path = directory / "state.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            raise JobError(f"cannot read the batch state {path}: {exc}") from exc
        check_state(data, path)
        return cls(path, data.get("deadline_at"), data.get("chunks", []))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        data = {"version": 1, "deadline_at": self.deadline_at, "chunks": self.chunks}
        tmp.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
        os.replace(tmp, self.path)

    def active(self) -> list[dict[str, Any]]:
        return [c for c in self.chunks if c["state"] != "done"]


def batch_dir(output: Path) -> Path:
    """Where a job on ``output`` keeps its batch state."""
    return output.with_name(output.name + ".batches")


def _read_items(
    fo: Fanout,
    src: Path,
    out: JobOutput,
    summary: JobSummary,
    retry_failed: bool,
    overrides: dict[str, Any],
) -> list[_Item]:
    """The input's ids that still need an answer, counted into ``summary`` as
    :func:`~fanout.jobs.run_jsonl` counts them."""
    model, system, params = _call_request(fo, overrides)
    done = out.read_done()
    items: list[_Item] = []
    seen: set[str] = set()
    try:
        f = src.open("rb")
    except OSError as exc:
        raise JobError(f"cannot read the questions from {src}: {exc.strerror}") from exc
    with f:
        for lineno, raw in enumerate(f, 1):
            raw = raw.removeprefix(BOM) if lineno == 1 else raw
            if not raw.strip():
                continue
            summary.total_lines += 1
            q, qid, bad = _parse(raw, lineno)
            if qid is not None and bad is None and qid in seen:
                bad = BadLine(lineno, f"duplicate id {qid}")
            if bad is not None:
                summary.bad_lines.append(bad)
                log.warning("%s:%d: skipped: %s", src, bad.line, bad.reason)
                continue
            assert q is not None and qid is not None
            seen.add(qid)
            fp = fingerprint(q, model, system, params)
            prev = done.get(qid)
            if prev is not None and (prev.fingerprint is None or prev.fingerprint.hex() == fp):
                if prev.ok:
                    summary.skipped_done += 1
                    continue
                if not retry_failed and not prev.unsent:  # never sent: asked, as online
                    summary.skipped_failed += 1
                    continue
                summary.retried_failed += 1
            elif prev is not None:
                summary.reasked_changed += 1
            items.append(_Item(qid, lineno, fp, q))
    return items


def choose_job_tier(fo: Fanout, questions: list[Question], **overrides: Any) -> TierChoice:
    """The tier (standard, flex or batch) and plan candidate a job of ``questions``
    would use under the call's policy (see :func:`fanout.core.tiers.choose_tier`)."""
    policy = overrides.get("policy") or fo.policy
    kwargs = {k: v for k, v in overrides.items() if k in ("model", "system", "policy")}
    plan = fo.plan(questions, **kwargs)
    return choose_tier(plan, policy)


async def run_job(
    summary: JobSummary,
    fo: Fanout,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    batch: bool | None = None,
    options: BatchOptions | None = None,
    resume: bool = True,
    retry_failed: bool = True,
    progress: bool = False,
    **overrides: Any,
) -> None:
    """Answer ``input_path`` into ``output_path`` online or through the Batch API.

    ``batch=True``: through the Batch API; ``False``: online (``run_jsonl``);
    ``None``: the policy's choice (``Policy(objective="cost", deadline=...)``: the
    cheapest way expected to finish by the deadline; else online), and through the
    Batch API anyway while batches of this output are unfinished (a resumed job).
    ``summary.tier`` and ``summary.tier_reason`` say what was chosen and why."""
    src, dst = Path(input_path), Path(output_path)
    options = options or BatchOptions()
    shard = overrides.pop("shard", None)
    state_dir = batch_dir(dst)
    if not resume and state_dir.exists():
        _forget(state_dir)
    state = _State.load(state_dir)
    policy = overrides.get("policy") or fo.policy
    if state.deadline_at is None and policy.deadline_s is not None:
        state.deadline_at = time.time() + policy.deadline_s
    chosen: TierChoice | None = None
    if batch is None and not state.active():
        if policy.objective == "cost" and policy.deadline_s is not None:
            with JobOutput.open(dst, overwrite=not resume) as out:
                items = _read_items(fo, src, out, JobSummary(), retry_failed, overrides)
            if items:
                chosen = choose_job_tier(fo, [i.question for i in items], **overrides)
                summary.tier, summary.tier_reason = chosen.tier, chosen.reason
                log.info("job plan: %s", chosen.reason)
        batch = chosen is not None and chosen.tier == "batch"
    if not batch and not state.active():
        tier = chosen.tier if chosen is not None else "standard"
        summary.tier = summary.tier or tier
        if tier == "flex":
            overrides = {**overrides, "service_tier": "flex"}
            left = None if state.deadline_at is None else state.deadline_at - time.time()
            token = flex_until.set(None if left is None else clock.now() + left)
        try:
            await run_into(
                summary,
                fo,
                src,
                dst,
                resume=resume,
                retry_failed=retry_failed,
                progress=progress,
                shard=shard,
                **overrides,
            )
        finally:
            if tier == "flex":
                flex_until.reset(token)
        return
    if shard is not None:
        raise ConfigError(
            "a sharded job (shard=, --shard) goes online: the Batch API takes one job per "
            "output, so run it unsharded with batch (--batch), or shard it online (--no-batch)"
        )
    summary.tier = "batch"
    group = chosen.chosen.candidate.group_size if chosen is not None else None
    job = _BatchJob(summary, fo, src, dst, state, options, retry_failed, overrides, group)
    job.progress = BatchProgress() if progress else None
    await job.run()


def _no_answer(question: Question, usage: Usage) -> Answer:
    """The record of a batch request that was billed and brought ``question`` no answer."""
    error = QuestionError(
        "its batch request brought no usable answer for it: asked again",
        index=0,
        question=question.text,
        attempts=1,
    )
    return Answer(
        index=0,
        question=question.text,
        id=question.id,
        error=error,
        usage=usage,
        mode="batch",
        attempts=1,
    )


def _forget(directory: Path) -> None:
    if not directory.exists():  # nothing was ever submitted
        return
    for child in directory.iterdir():
        child.unlink()
    directory.rmdir()


class _BatchJob:
    """One run of a batch job (see the module docstring)."""

    def __init__(
        self,
        summary: JobSummary,
        fo: Fanout,
        src: Path,
        dst: Path,
        state: _State,
        options: BatchOptions,
        retry_failed: bool,
        overrides: dict[str, Any],
        group_size: int | None,
    ) -> None:
        self.summary, self.fo, self.src, self.dst = summary, fo, src, dst
        self.state, self.options, self.retry_failed = state, options, retry_failed
        self.overrides = {k: v for k, v in overrides.items() if k != "max_cost"}
        self.model, self.system, self.params = _call_request(fo, overrides)
        self.caps = BatchCap(fo, overrides.get("max_cost"), dst, str(self.model), summary)
        self.held: list[tuple[list[_Item], int, int]] = []
        """(items, round, group size) of requests that did not fit under the caps while
        batches were out: planned again as those are collected (``_within_cap``)."""
        policy = overrides.get("policy") or fo.policy
        self.policy = policy
        self.group_size = batch_group_size(policy, group_size)  # a batch checks no merge
        # The one retry layer is fanout's (``_api``): the SDK's own retries are off.
        self.client = fo.client.with_options(max_retries=0)
        self.retry = fo.retry
        self.pending: dict[str, _Item] = {}
        self.progress: BatchProgress | None = None

    # --- the run --------------------------------------------------------------------
    async def run(self) -> None:
        with JobOutput.open(self.dst, overwrite=False) as out:
            self.out = out
            self.summary.repaired_tail = out.repaired
            items = _read_items(
                self.fo, self.src, out, self.summary, self.retry_failed, self.overrides
            )
            self.pending = {i.qid: i for i in items}
            covered = {
                qid
                for c in self.state.active()
                for line in c["lines"].values()
                for qid, fp in line["ids"]
                if self._is_pending(qid, fp)
            }
            fresh = [i for i in items if i.qid not in covered]
            if fresh:
                warn_unchecked(
                    self.fo,
                    self.policy,
                    self.group_size,
                    str(self.model),
                    [i.question for i in fresh],
                )
                self._plan_chunks(fresh, round_=1, group_size=self.group_size)
            while self.state.active():
                await self._advance()
                held, self.held = self.held, []
                for its, round_, size in held:  # what the collected batches spent frees
                    self._plan_chunks(its, round_=round_, group_size=size)
                if self.state.active():
                    await asyncio.sleep(self.options.poll_s)
            self.summary.batches = len(self.state.chunks)
            online = list(self.pending.values())
            if online:
                log.info("%d question(s) left after the batches: asking them online", len(online))
                await self._online(online)
        if not self.pending:
            _forget(batch_dir(self.dst))

    def _is_pending(self, qid: str, fp: str) -> bool:
        item = self.pending.get(qid)
        return item is not None and item.fp == fp

    def _plan_chunks(
        self, items: list[_Item], *, round_: int, group_size: int, collected: str = ""
    ) -> None:
        """Write the batch input files for ``items`` and record them (state first), those
        within the spend cap (``collected``: the key of a chunk being collected)."""
        lines: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        key = secrets.token_hex(4)
        fmt = MERGE_FORMAT
        by_model: dict[str, list[_Item]] = {}
        for item in items:
            model = str(item.question.params.get("model", self.model))
            by_model.setdefault(model, []).append(item)
        n = 0
        for model, its in by_model.items():
            mergeable = [i for i in its if i.question.mergeable] if group_size > 1 else []
            alone = [i for i in its if i not in mergeable]
            groups = [mergeable[k : k + group_size] for k in range(0, len(mergeable), group_size)]
            groups += [[i] for i in alone]
            for g in groups:
                n += 1
                custom_id = f"{key}-{n}"
                if len(g) == 1:
                    body = self._body(g[0].question, model)
                    meta: dict[str, Any] = {"ids": [[g[0].qid, g[0].fp]], "merged": None}
                else:
                    request = build_merged([i.question.text for i in g], fmt)
                    body = merged_params(
                        request,
                        model=model,
                        system=self.system,
                        create_kwargs=self.params,
                        context=g[0].question.context,
                    )
                    meta = {
                        "ids": [[i.qid, i.fp] for i in g],
                        "merged": {"format": fmt, "nonce": request.nonce},
                    }
                line = {"custom_id": custom_id, "method": "POST", "url": _ENDPOINT, "body": body}
                lines.append((model, line, meta))
        lines = self._within_cap(lines, collected, round_, group_size)
        # Files: one model each, within the request and byte limits.
        chunk: list[tuple[dict[str, Any], dict[str, Any]]] = []
        size, model_of = 0, None
        for model, line, meta in lines:
            data = len(json.dumps(line, ensure_ascii=False).encode()) + 1
            if chunk and (
                model != model_of
                or len(chunk) >= self.options.max_requests
                or size + data > self.options.max_bytes
            ):
                self._record_chunk(chunk, round_)
                chunk, size = [], 0
            chunk.append((line, meta))
            size += data
            model_of = model
        if chunk:
            self._record_chunk(chunk, round_)

    def _within_cap(
        self,
        lines: list[tuple[str, dict[str, Any], dict[str, Any]]],
        collected: str,
        round_: int,
        group_size: int,
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """The lines to submit under the spend caps, in order (see ``_batch_cap``). The
        first that does not fit, and those after it, wait while batches are out, these
        lines' included (``held``: what those cost may leave room, as an online request
        waits for the ones in flight to settle); with none out, they are not sent: their
        questions get a ``BudgetExceededError`` record, and the job stops at the cap."""
        if not self.caps.on:
            return lines
        out = [c for c in self.state.active() if c["key"] != collected]
        reserved = self.caps.reserved(out, batch_dir(self.dst))
        left = self.caps.left(reserved)
        for k, (model, line, meta) in enumerate(lines):
            worst = self.caps.worst(model, line["body"], len(meta["ids"]))
            if worst <= left:
                left -= worst
                meta["worst"] = str(worst)
                continue
            rest = [self.pending[qid] for _, _, m in lines[k:] for qid, _ in m["ids"]]
            if out or k:  # batches out (those before it here included): wait for them
                self.held.append((rest, round_, group_size))
            else:
                for item in rest:
                    self._write(item, not_sent(item.question, worst, left), "batch")
                self.summary.stopped_for_budget = True
            return lines[:k]
        return lines

    def _record_chunk(
        self, chunk: list[tuple[dict[str, Any], dict[str, Any]]], round_: int
    ) -> None:
        key = f"{secrets.token_hex(6)}"
        directory = batch_dir(self.dst)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{key}.jsonl"
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line, _ in chunk)
        path.write_text(data, "utf-8")
        self.state.chunks.append(
            {
                "key": key,
                "round": round_,
                "file": path.name,
                "file_id": None,
                "batch_id": None,
                "state": "written",
                "lines": {line["custom_id"]: meta for line, meta in chunk},
            }
        )
        self.state.save()

    def _body(self, question: Question, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, **self.params, **question.params}
        body["model"] = model
        body["messages"] = messages_for(question, self.system)
        return body

    # --- the phases -----------------------------------------------------------------
    async def _api(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """One call of the Files or Batch API, retried by the one retry layer where
        another attempt is worth it (5xx, 429, a connection lost, a timeout); any other
        failure ends the job in one line naming ``what``. The answers recorded so far are
        kept, and the state too: the same command resumes."""
        try:
            async for attempt in build_retrying(self.retry, sleep=anyio.sleep):
                with attempt:
                    return await call()
        except openai.NotFoundError as exc:
            # The state names a batch or file this endpoint does not have (made on
            # another endpoint, or deleted): running the same command again fails the
            # same way, and --overwrite would throw the recorded answers away.
            raise JobError(
                f"the Batch API failed to {what}: 404 {exc.message}; the batch state "
                f"{self.state.path} names a batch or file this endpoint does not have: "
                "point --base-url at the endpoint that made it, or delete "
                f"{self.state.path.parent} to ask its questions again (the answers "
                f"recorded in {self.dst} are kept)"
            ) from exc
        except openai.APIError as exc:
            status = getattr(exc, "status_code", None)
            said = f"{status} {exc.message}" if status is not None else exc.message
            raise JobError(
                f"the Batch API failed to {what}: {said}; the answers recorded so far are "
                "kept: run the same command again to resume"
            ) from exc
        raise AssertionError("unreachable: tenacity re-raises the last failure")

    async def _advance(self) -> None:
        for chunk in self.state.active():
            if chunk["file_id"] is None:
                await self._upload(chunk)
            if chunk["batch_id"] is None:
                await self._create(chunk)
            batch_id = chunk["batch_id"]
            batch = await self._api(
                f"read batch {batch_id}",
                functools.partial(self.client.batches.retrieve, batch_id),
            )
            if batch.status in _TERMINAL:
                await self._collect(chunk, batch)
            elif self.progress is not None:
                n = batch.request_counts
                self.progress.waiting(
                    batch.id,
                    batch.status,
                    n.completed if n else 0,
                    n.failed if n else 0,
                    n.total if n else 0,
                )

    async def _upload(self, chunk: dict[str, Any]) -> None:
        name = f"fanout-{chunk['key']}.jsonl"
        path = batch_dir(self.dst) / chunk["file"]
        data = path.read_bytes()

        async def uploaded() -> Any:
            async for f in await self.client.files.list(purpose="batch"):
                if f.filename == name and f.bytes == len(data):
                    return f  # uploaded by a run killed before it recorded the id
            return None

        found = await self._api("list the uploaded files", uploaded)
        if found is None:
            found = await self._api(
                f"upload {name}",
                lambda: self.client.files.create(file=(name, data), purpose="batch"),
            )
        chunk["file_id"] = found.id
        self.state.save()

    async def _create(self, chunk: dict[str, Any]) -> None:
        async def created() -> Any:
            async for b in await self.client.batches.list():
                if (b.metadata or {}).get("fanout_chunk") == chunk["key"]:
                    return b  # created by a run killed before it recorded the id
            return None

        found = await self._api("list the batches", created)
        if found is None:
            found = await self._api(
                f"create the batch of {chunk['file']}",
                lambda: self.client.batches.create(
                    input_file_id=chunk["file_id"],
                    endpoint=_ENDPOINT,
                    completion_window="24h",
                    metadata={"fanout_chunk": chunk["key"], "fanout_output": self.dst.name[:400]},
                ),
            )
        chunk["batch_id"] = found.id
        self.state.save()

    async def _collect(self, chunk: dict[str, Any], batch: Any) -> None:
        """Write the answers of a finished batch; re-plan what failed or expired."""
        lines: dict[str, dict[str, Any]] = {}
        for kind, file_id in (("output", batch.output_file_id), ("error", batch.error_file_id)):
            if file_id:
                content = await self._api(
                    f"download the {kind} file {file_id} of batch {batch.id}",
                    functools.partial(self.client.files.content, file_id),
                )
                for custom_id, line in read_file(content.text, batch.id, kind, file_id).items():
                    lines.setdefault(custom_id, line)  # an error line never hides an answer
        again: list[_Item] = []
        for custom_id, meta in chunk["lines"].items():
            ids = [(qid, fp) for qid, fp in meta["ids"] if self._is_pending(qid, fp)]
            if not ids:
                continue  # answered before a kill, or its request changed since
            entry = lines.get(custom_id)
            answered: dict[str, Answer] = {}
            lost: dict[str, Usage] = {}
            # A merged line partly written before a kill: the rest asked again, alone.
            if entry is not None and len(ids) == len(meta["ids"]):
                answered, lost = read_line(
                    entry,
                    meta,
                    [qid for qid, _ in ids],
                    [self.pending[qid].question for qid, _ in ids],
                )
            for qid, _fp in ids:
                item = self.pending[qid]
                answer = answered.get(qid)
                if answer is None:
                    if qid in lost:  # billed, no answer: the job's spend counts it
                        self._write(
                            item, _no_answer(item.question, lost[qid]), "batch", final=False
                        )
                    again.append(item)
                    continue
                if not answer.usage.total_tokens and "worst" in meta:
                    # No usage with it: under a cap it costs its request's reservation (its
                    # share of it), as an online reply without usage does.
                    share = Decimal(meta["worst"]) / len(meta["ids"])
                    answer = answer.model_copy(update={"cost": share})
                self._write(item, answer, "batch", merged=meta["merged"] is not None)
        if batch.status == "failed" and batch.errors and batch.errors.data:
            first = batch.errors.data[0]
            log.warning(
                "batch %s failed validation: %s (line %s)", batch.id, first.message, first.line
            )
        # Killed once between planning this chunk's retries and marking it done: those
        # retries are recorded already (an active chunk), and are not planned twice.
        retried = {
            qid
            for c in self.state.active()
            if c["key"] != chunk["key"]
            for line in c["lines"].values()
            for qid, _ in line["ids"]
        }
        again = [item for item in again if item.qid not in retried]
        if again:
            self._retry(again, chunk["round"] + 1, chunk["key"])
        chunk["state"] = "done"
        self.state.save()
        (batch_dir(self.dst) / chunk["file"]).unlink(missing_ok=True)

    def _retry(self, items: list[_Item], round_: int, collected: str) -> None:
        left = None if self.state.deadline_at is None else self.state.deadline_at - time.time()
        room = left is None or left > self.policy.batch_expected_s
        if round_ <= self.options.max_rounds and room:
            log.info(
                "%d request(s) failed or expired in a batch: in a new batch, alone", len(items)
            )
            self._plan_chunks(items, round_=round_, group_size=1, collected=collected)
        # else: left pending, asked online once the batches are done

    def _write(
        self, item: _Item, answer: Answer, tier: str, *, final: bool = True, merged: bool = False
    ) -> None:
        """Record ``answer`` (``final``: the question's; else a record of what a request
        that brought it none cost, superseded by its answer; ``merged``: taken from a
        merged batch request, unchecked) and count it."""
        if answer.cost is None and answer.usage.total_tokens:
            # In US dollars at the tier the answer came through (the batch price).
            model = str(item.question.params.get("model", self.model))
            tiered: Tier = "batch" if tier == "batch" else "standard"
            answer = answer.model_copy(
                update={"cost": self.fo.pricer.cost(answer.usage, model, tiered)}
            )
        self.out.append(_record(answer, item.line, item.fp, merged=UNCHECKED if merged else None))
        self.summary.token_units += answer.usage.total_tokens * tier_factor(tier)
        if answer.cost is not None and self.summary.cost is not None:
            self.summary.cost += answer.cost
        elif answer.usage.total_tokens:
            self.summary.cost = None  # tokens of an unknown price
        if tier == "batch" and answer.cost is not None:
            self.caps.spent(answer.cost)  # online answers are counted by the engine
        if not final:
            return
        self.pending.pop(item.qid, None)
        if answer.error is None:
            self.summary.answered += 1
            if tier == "batch":
                self.summary.batch_answered += 1
                self.summary.batch_unchecked += merged
        else:
            self.summary.failed += 1
            self.summary.first_error = self.summary.first_error or _error_text(answer, item.line)

    async def _online(self, items: list[_Item]) -> None:
        by_id = {i.qid: i for i in items}

        async def questions() -> AsyncIterator[Question]:
            for i in items:
                yield i.question

        left = self.caps.online_cap()  # what the job's cap leaves after its batches
        capped: dict[str, Any] = {} if left is None else {"max_cost": left}
        answers = self.fo.as_completed(questions(), **self.overrides, **capped)
        try:
            async for answer in answers:
                item = by_id.get(answer.id) if answer.id is not None else None
                if item is not None:
                    self._write(item, answer, "standard")
                if isinstance(answer.error, BudgetExceededError):
                    self.summary.stopped_for_budget = True
        finally:
            aclose = getattr(answers, "aclose", None)
            if aclose is not None:
                await aclose()
