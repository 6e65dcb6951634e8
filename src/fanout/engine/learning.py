"""Learning: what a ``Fanout``'s responses teach about its endpoint, for all its calls.

The transport sends; what comes back is handed here (``Learner.response``): the
response's usage and timing teach the endpoint model (``endpoint/model.py``: round
trip, prefill and decode speed, how much requests slow each other), and its system
prompt is noted as one the endpoint may have cached. The engine's other rooms teach
it too, through ``learner.endpoint`` (answer lengths, what merging costs, what merge
checks found) and ``json_ok`` (the endpoint refused ``response_format``). The planner
reads all of it; the endpoint memory saves and restores it across processes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core import clock
from ..core.config import Policy
from ..endpoint.model import EndpointModel

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = ["FirstTokenSeen", "Learner"]

_SHARED_KEPT = 64  # system prompts remembered as sent (the most recent)


class FirstTokenSeen:
    """When a streamed response's first text came, with the tokens the endpoint had
    answered by then and the share of the answer it held (``Learner.response``)."""

    __slots__ = ("at", "done", "tokens")

    def __init__(self, at: float, done: tuple[int, int], tokens: int) -> None:
        self.at = at
        self.done = done
        self.tokens = tokens


class Learner:
    """What the endpoint has taught so far (see the module docstring); one per
    ``Fanout``, shared by its calls."""

    def __init__(self, endpoint: EndpointModel | None = None) -> None:
        self.endpoint = endpoint or EndpointModel()
        self.json_ok = True
        """Until the endpoint refuses ``response_format``."""
        # Tokens of the requests answered so far: the work that finished during a
        # request's life is the difference, which teaches the endpoint model how
        # much requests delay each other.
        self._done_prompt_tokens = 0
        self._done_completion_tokens = 0
        self._sent_shared: OrderedDict[int, None] = OrderedDict()  # see remember_shared

    def merge_format(self, policy: Policy) -> str:
        """The format a merged request uses: the policy's, or for ``"auto"`` JSON where
        the endpoint takes ``response_format``, tagged text where it refused it."""
        if policy.merge_format != "auto":
            return policy.merge_format
        return "json" if self.json_ok else "text"

    def done_tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens of every request answered so far."""
        return self._done_prompt_tokens, self._done_completion_tokens

    def response(
        self,
        completion: ChatCompletion,
        messages: Sequence[Any],
        *,
        sent: float,
        done_before: tuple[int, int],
        cached: int,
        first_token: FirstTokenSeen | None = None,
    ) -> None:
        """Learn from one answered request sent at ``sent`` (when ``done_before`` tokens
        had been answered): the response, and, for a streamed one whose first text came
        spread from the rest (``first_token``), that first chunk as a request that wrote
        its tokens too (with the response, it tells the decode speed from the round trip
        even when every answer is as long as the next)."""
        usage = completion.usage
        if usage is None:
            return
        if first_token is not None:
            self.endpoint.observe(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=first_token.tokens,
                latency_s=first_token.at - sent,
                others_prompt_tokens=first_token.done[0] - done_before[0],
                others_completion_tokens=first_token.done[1] - done_before[1],
                cached_prompt_tokens=cached,
            )
        self.endpoint.observe(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_s=clock.now() - sent,
            others_prompt_tokens=self._done_prompt_tokens - done_before[0],
            others_completion_tokens=self._done_completion_tokens - done_before[1],
            cached_prompt_tokens=cached,
            sent_at=sent,
        )
        self._done_prompt_tokens += usage.prompt_tokens - cached
        self._done_completion_tokens += usage.completion_tokens
        self.remember_shared(messages)

    def has_sent_shared(self, system: str | None) -> bool:
        """Whether a request began with this system prompt already."""
        return bool(system) and hash(system) in self._sent_shared

    def remember_shared(self, messages: Sequence[Any]) -> None:
        """Note the system prompt a request began with: an endpoint that caches
        prefixes has it now (the planner then leaves its prefill out)."""
        first = messages[0] if messages else None
        if isinstance(first, Mapping) and first.get("role") == "system":
            key = hash(str(first.get("content")))
            self._sent_shared[key] = None
            self._sent_shared.move_to_end(key)
            while len(self._sent_shared) > _SHARED_KEPT:
                self._sent_shared.popitem(last=False)
