"""A context-only run whose memory agent is a priced model on a loopback OpenAI-compatible
server (`base_url` filled in), and the reply that writes its context."""

CONFIG = """\
[ingest]
mode = "context-only"

[models]
agent = "local:tiny"
qa = "fake:quote-memory"
judge = "fake:match-judge"

[providers.local]
kind = "openai-compatible"
base_url = "{base_url}"

[prices."local:tiny"]
input_per_mtok = 1000.0
output_per_mtok = 2000.0
"""
CONTEXT = {"tool_calls": [("put_context", {"content": "Facts:\n- the user has a dog"})]}
