#!/usr/bin/env python3
"""Pack a root filesystem folder into a single-layer image archive in docker-archive format.

usage: python3 hack/node/mkimage.py ROOTFS_DIR NAME:TAG OUT.tar CONFIG_JSON

CONFIG_JSON is the image config's "config" object (Entrypoint, Cmd, Env, User, ...). containerd imports the result
with `ctr -n k8s.io images import OUT.tar`; no Docker engine, buildah or registry is involved. Owners are root,
times are 0 and entries are sorted, so the same inputs give the same bytes and the same image digest.
"""
import hashlib, io, json, os, platform, sys, tarfile, tempfile

ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def normalize(info):
    # Only the mode is kept from the folder: who built it and when must not change the digest.
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def write_layer(rootfs, out):
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for top, dirs, files in os.walk(rootfs):
            dirs.sort()
            for name in sorted(dirs + files):
                path = os.path.join(top, name)
                tar.add(path, arcname=os.path.relpath(path, rootfs), recursive=False, filter=normalize)


def sha256_file(f):
    f.seek(0)
    digest = hashlib.sha256()
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def entry(name, size, kind=tarfile.REGTYPE, mode=0o644):
    info = normalize(tarfile.TarInfo(name))
    info.size, info.type, info.mode = size, kind, mode
    return info


def main(rootfs, ref, out_path, config_json):
    if not os.path.isdir(rootfs) or ":" not in ref.rsplit("/", 1)[-1]:
        sys.exit("usage: mkimage.py ROOTFS_DIR NAME:TAG OUT.tar CONFIG_JSON")
    out_dir = os.path.dirname(os.path.abspath(out_path))
    with tempfile.TemporaryFile(dir=out_dir) as layer:
        write_layer(rootfs, layer)
        diff_id = sha256_file(layer)
        config = json.dumps({
            "architecture": ARCH, "os": "linux", "created": "1970-01-01T00:00:00Z",
            "config": json.loads(config_json),
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
            "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "hack/node/mkimage.py"}],
        }, sort_keys=True, separators=(",", ":")).encode()
        config_name = hashlib.sha256(config).hexdigest() + ".json"
        manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": [diff_id + "/layer.tar"]}]).encode()
        # Written beside OUT and renamed, so an interrupted run never leaves a truncated archive behind.
        tmp = out_path + ".tmp"
        with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(entry(diff_id, 0, tarfile.DIRTYPE, 0o755))
            layer.seek(0, os.SEEK_END)
            size = layer.tell()
            layer.seek(0)
            tar.addfile(entry(diff_id + "/layer.tar", size), layer)
            tar.addfile(entry(config_name, len(config)), io.BytesIO(config))
            tar.addfile(entry("manifest.json", len(manifest)), io.BytesIO(manifest))
        os.replace(tmp, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip())
    main(*sys.argv[1:])
