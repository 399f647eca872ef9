"""Each failed model call's error names its caller (the role, the model and the endpoint:
lme_bench.providers.errors.name_the_caller): a LangChain callback set on every model built
(lme_bench.providers.factory), which sees each failed call before LangChain raises its error,
and a wrapper for the calls made without LangChain (the judge's official request, Anthropic's
Messages API)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.providers.errors import ModelCaller, name_the_caller


class NameTheCaller(BaseCallbackHandler):
    """A model's callback: the error of each failed call names `caller`."""

    run_inline = True  # before LangChain raises the error, on its own thread
    raise_error = False

    def __init__(self, caller: ModelCaller) -> None:
        self.caller = caller

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        name_the_caller(error, self.caller)


class CallerNamed:
    """A chat call made without LangChain whose failed calls' errors name `caller`; its other
    attributes are the call's own."""

    def __init__(self, call: Any, caller: ModelCaller) -> None:
        self.call = call
        self.caller = caller

    async def ainvoke(self, messages: Sequence[BaseMessage], /) -> AIMessage:
        try:
            reply: AIMessage = await self.call.ainvoke(messages)
        except Exception as error:
            name_the_caller(error, self.caller)
            raise
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.call, name)
