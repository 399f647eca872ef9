"""The model one mem0 memory calls, watched for replies cut by the output cap.

mem0 reads its extraction reply as one JSON object and, when the reply does not parse, logs
the error and stores nothing. A reply the output cap cut short never parses, so a long session
(a BEAM batch of sixty long messages) would lose its facts without a failure. Each memory gets
its own watcher (its adds run one at a time under the memory's lock), and the backend asks it
after an add whether a reply was cut.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import ConfigDict, PrivateAttr

from lme_bench.providers.calls import was_capped


class CapWatchingModel(BaseChatModel):
    """`inner` as it is, remembering whether a reply since `reset` was cut by the cap."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    _capped: bool = PrivateAttr(default=False)

    @property
    def _llm_type(self) -> str:
        return f"lme-bench-cap-watch-{self.inner._llm_type}"

    @property
    def capped(self) -> bool:
        return self._capped

    def reset(self) -> None:
        self._capped = False

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result = self.inner._generate(messages, stop, **kwargs)
        for generation in result.generations:
            message = generation.message
            if isinstance(message, AIMessage) and was_capped(message):
                self._capped = True
        return result
