#!/usr/bin/env python3
"""Register a safetensors model directory with a running Ollama server, keeping nested file paths.

`ollama create` (v0.24.0) uploads a directory's files under their base names only (a TODO in cmd/cmd.go), so a
sentence-transformers model's `1_Pooling/config.json` collides with the top-level `config.json` and the BERT
converter fails with "open 1_Pooling/config.json: no such file or directory". This does what the CLI does, over
the same HTTP API, but names every file by its path relative to the model directory.

    create-from-directory.py --host 127.0.0.1:PORT --name NAME --modelfile PATH

The Modelfile may hold only FROM (a directory, relative to the Modelfile) and PARAMETER lines.
Standard library only: the installers must not need pip packages beyond the model wheels.
"""

import argparse
import hashlib
import json
import sys
import urllib.request
from pathlib import Path


def parse_modelfile(path: Path) -> tuple[Path, dict[str, object]]:
    source: Path | None = None
    parameters: dict[str, object] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if line == "" or line.startswith("#"):
            continue
        command, _, rest = line.partition(" ")
        command, rest = command.upper(), rest.strip()
        if command == "FROM":
            source = (path.parent / rest).resolve()
        elif command == "PARAMETER":
            key, _, value = rest.partition(" ")
            parsed = parse_value(value.strip().strip('"'))
            previous = parameters.get(key)
            # Repeated keys (stop) become lists, as in Ollama's own parser.
            if previous is None:
                parameters[key] = parsed
            else:
                parameters[key] = [*previous, parsed] if isinstance(previous, list) else [previous, parsed]
        else:
            raise SystemExit(f"{path}:{number}: only FROM and PARAMETER are supported here, not {command}")
    if source is None or not source.is_dir():
        raise SystemExit(f"{path}: FROM must name a model directory")
    return source, parameters


def parse_value(value: str) -> object:
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value


def model_files(directory: Path) -> list[Path]:
    """The files Ollama's converter reads: weights, every JSON config (nested ones too), a tokenizer model."""
    weights = sorted(directory.glob("model*.safetensors"))
    if not weights:
        raise SystemExit(f"{directory}: no model*.safetensors")
    configs = sorted(directory.glob("*.json")) + sorted(directory.glob("*/*.json"))
    tokenizer = [p for p in (directory / "tokenizer.model",) if p.is_file()]
    return weights + configs + tokenizer


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def upload_blob(base: str, path: Path, digest: str) -> None:
    with path.open("rb") as handle:
        request = urllib.request.Request(
            f"{base}/api/blobs/{digest}",
            data=handle,
            method="POST",
            headers={"Content-Length": str(path.stat().st_size)},
        )
        with urllib.request.urlopen(request) as response:
            response.read()


def create(base: str, name: str, files: dict[str, str], parameters: dict[str, object]) -> None:
    body = {"model": name, "files": files, "parameters": parameters, "stream": True}
    request = urllib.request.Request(
        f"{base}/api/create",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        # The server streams progress lines and reports a failed conversion as {"error": ...} with status 200.
        for line in response:
            event = json.loads(line)
            if "error" in event:
                raise SystemExit(f"ollama create {name}: {event['error']}")
            print(f"{name}: {event.get('status', '')}", file=sys.stderr)
            if event.get("status") == "success":
                return
    raise SystemExit(f"ollama create {name}: the server ended without reporting success")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", required=True, help="host:port of a running ollama serve")
    parser.add_argument("--name", required=True)
    parser.add_argument("--modelfile", required=True, type=Path)
    args = parser.parse_args()

    base = f"http://{args.host}"
    directory, parameters = parse_modelfile(args.modelfile)
    files: dict[str, str] = {}
    for path in model_files(directory):
        digest = sha256_of(path)
        upload_blob(base, path, digest)
        files[path.relative_to(directory).as_posix()] = digest
    create(base, args.name, files, parameters)


if __name__ == "__main__":
    main()
