"""A loopback stand-in for what a Bedrock batch inference job touches, for tests, over real
HTTP/1.1 through boto3: S3 (path-style PUT, GET and ListObjectsV2 of objects), Bedrock's
control plane (CreateModelInvocationJob, then GetModelInvocationJob moving the job from
Submitted through InProgress to Completed, one step per look, writing `<output>/<job id>/
records.jsonl.out` with Claude's reply per record, or an error for records at `failing`
positions) and the runtime's Converse, for the call-by-call path. Replies come from
`answer(prompt)`, the same whichever way a request is sent.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

from tests.providers.http11 import Http11Handler, LoopbackServer, run_server

STEPS = ("Submitted", "InProgress", "Completed")
ACCOUNT = "123456789012"


def yes_or_no(prompt: str) -> str:
    return "yes" if hashlib.sha256(prompt.encode()).digest()[0] % 2 else "no"


def prompt_of(messages: list[dict[str, Any]]) -> str:
    content = messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


@dataclass
class FakeJob:
    arn: str
    name: str
    model_id: str
    role_arn: str
    input_uri: str
    output_uri: str
    looks: int = 0
    counts: tuple[int, int] = (0, 0)  # succeeded, errored

    @property
    def status(self) -> str:
        return STEPS[min(self.looks, len(STEPS) - 1)]

    def payload(self) -> dict[str, Any]:
        done = self.status == "Completed"
        return {
            "jobArn": self.arn,
            "jobName": self.name,
            "modelId": self.model_id,
            "roleArn": self.role_arn,
            "status": self.status,
            "submitTime": "2026-01-01T00:00:00Z",
            "inputDataConfig": {"s3InputDataConfig": {"s3Uri": self.input_uri}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": self.output_uri}},
            **(
                {
                    "totalRecordCount": sum(self.counts),
                    "processedRecordCount": sum(self.counts),
                    "successRecordCount": self.counts[0],
                    "errorRecordCount": self.counts[1],
                }
                if done
                else {}
            ),
        }


class FakeBedrockBatches:
    def __init__(
        self, answer: Callable[[str], str] = yes_or_no, failing: set[int] | None = None
    ) -> None:
        self.answer = answer
        self.failing = failing or set()
        self.objects: dict[tuple[str, str], bytes] = {}
        self.jobs: dict[str, FakeJob] = {}
        self.created: list[dict[str, Any]] = []
        self.converse_requests: list[dict[str, Any]] = []
        self.server: LoopbackServer | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def reply(self, prompt: str, cap: int) -> tuple[str, int, int]:
        words = self.answer(prompt).split()[:cap]
        return " ".join(words), len(prompt.split()), len(words)

    def object_at(self, uri: str) -> bytes:
        parts = urlsplit(uri)
        return self.objects[(parts.netloc, parts.path.lstrip("/"))]

    def look(self, job: FakeJob) -> None:
        with self._lock:
            was = job.status
            job.looks += 1
            if job.status != "Completed" or was == "Completed":
                return
            records = [json.loads(x) for x in self.object_at(job.input_uri).splitlines() if x]
            out = []
            for position, record in enumerate(records):
                if position in self.failing:
                    error = {"errorCode": 500, "errorMessage": "Internal error"}
                    out.append({"recordId": record["recordId"], "error": error})
                    continue
                body = record["modelInput"]
                text, tokens_in, tokens_out = self.reply(
                    prompt_of(body["messages"]), body["max_tokens"]
                )
                message = {
                    "id": "msg_bdrk_01",
                    "type": "message",
                    "role": "assistant",
                    "model": job.model_id,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                }
                out.append({"recordId": record["recordId"], "modelOutput": message})
            job.counts = (len(records) - len(self.failing), len(self.failing))
            target = urlsplit(job.output_uri)
            job_id = job.arn.rsplit("/", 1)[-1]
            key = f"{target.path.strip('/')}/{job_id}/records.jsonl.out"
            self.objects[(target.netloc, key)] = "".join(json.dumps(r) + "\n" for r in out).encode()
            self.objects[
                (target.netloc, f"{target.path.strip('/')}/{job_id}/manifest.json.out")
            ] = b"{}"


def _list_xml(bucket: str, prefix: str, keys: list[tuple[str, int]]) -> bytes:
    items = "".join(
        f"<Contents><Key>{escape(k)}</Key><Size>{n}</Size>"
        '<LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"e"</ETag></Contents>'
        for k, n in keys
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{escape(bucket)}</Name><Prefix>{escape(prefix)}</Prefix>"
        f"<KeyCount>{len(keys)}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
        f"{items}</ListBucketResult>"
    ).encode()


def _handler(fake: FakeBedrockBatches) -> type[Http11Handler]:
    class Handler(Http11Handler):
        def do_PUT(self) -> None:
            data = self.read_body()
            bucket, _, key = unquote(urlsplit(self.path).path).lstrip("/").partition("/")
            with fake._lock:
                fake.objects[(bucket, key)] = data
            self.send_bytes(200, "application/xml", b"", ETag='"e"')

        def do_POST(self) -> None:
            body = json.loads(self.read_body() or b"{}")
            path = unquote(urlsplit(self.path).path)
            if path == "/model-invocation-job":
                job_id = f"job{next(fake._ids):04d}"
                arn = f"arn:aws:bedrock:us-east-1:{ACCOUNT}:model-invocation-job/{job_id}"
                job = FakeJob(
                    arn,
                    body["jobName"],
                    body["modelId"],
                    body["roleArn"],
                    body["inputDataConfig"]["s3InputDataConfig"]["s3Uri"],
                    body["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"],
                )
                with fake._lock:
                    fake.jobs[arn] = job
                    fake.created.append(body)
                self.send_json(200, {"jobArn": arn})
            elif path.startswith("/model/") and path.endswith("/converse"):
                with fake._lock:
                    fake.converse_requests.append(body)
                cap = int(body.get("inferenceConfig", {}).get("maxTokens", 100))
                text, tokens_in, tokens_out = fake.reply(prompt_of(body["messages"]), cap)
                self.send_json(
                    200,
                    {
                        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                        "stopReason": "end_turn",
                        "usage": {
                            "inputTokens": tokens_in,
                            "outputTokens": tokens_out,
                            "totalTokens": tokens_in + tokens_out,
                        },
                        "metrics": {"latencyMs": 1},
                    },
                )
            else:
                self.send_json(404, {"message": f"no route {path}"})

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            if path.startswith("/model-invocation-job/"):
                job = fake.jobs.get(path.removeprefix("/model-invocation-job/"))
                if job is None:
                    self.send_json(404, {"message": "no such job"})
                    return
                fake.look(job)
                self.send_json(200, job.payload())
                return
            bucket, _, key = path.lstrip("/").partition("/")
            query = parse_qs(parts.query)
            if not key and "list-type" in query:
                prefix = query.get("prefix", [""])[0]
                with fake._lock:
                    keys = [(k, len(v)) for (b, k), v in fake.objects.items() if b == bucket]
                found = sorted((k, n) for k, n in keys if k.startswith(prefix))
                self.send_bytes(200, "application/xml", _list_xml(bucket, prefix, found))
            elif (bucket, key) in fake.objects:
                self.send_bytes(200, "application/octet-stream", fake.objects[(bucket, key)])
            else:
                self.send_bytes(404, "application/xml", b"<Error><Code>NoSuchKey</Code></Error>")

    return Handler


@contextmanager
def serve_bedrock_batches(
    fake: FakeBedrockBatches | None = None,
) -> Iterator[tuple[str, FakeBedrockBatches]]:
    """Run the fake on a free loopback port; yields (its URL, the fake)."""
    fake = fake or FakeBedrockBatches()
    with run_server(_handler(fake)) as server:
        fake.server = server
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
