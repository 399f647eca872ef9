"""The LangChain callback that has each failed call's error name its caller (the role, the model
and the endpoint: lme_bench.providers.errors.name_the_caller), set on every model built
(lme_bench.providers.factory); it sees each failed call before LangChain raises its error."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from lme_bench.providers.errors import ModelCaller, name_the_caller


class NameTheCaller(BaseCallbackHandler):
    """A model's callback: the error of each failed call names `caller`."""

    run_inline = True  # before LangChain raises the error, on its own thread
    raise_error = False

    def __init__(self, caller: ModelCaller) -> None:
        self.caller = caller

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        name_the_caller(error, self.caller)
