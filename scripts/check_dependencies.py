#!/usr/bin/env python3
"""The dependency advisory check CI can make here: every locked package comes from crates.io and
no locked version is yanked.

RustSec's advisory database (what `cargo audit` and `cargo deny check advisories` read) is a git
repository on GitHub, which this machine cannot reach; crates.io's index can be. A crate's
authors yank a version when it must not be used (a vulnerability, a soundness bug, a broken
build), so a yanked version in the lock file is the advisory signal the registry itself gives.
cargo-deny (deny.toml) checks the workspace's licences and sources; this script adds what it
cannot check here, yanked versions, for memvid-core's driver's lock file too. A package from
anywhere but crates.io is reported, since crates.io's index cannot vouch for it.

Usage: python3 scripts/check_dependencies.py [Cargo.lock ...]   (default: the workspace's)
Exits 1 naming every package that fails, 2 when the index cannot be read.
"""

import concurrent.futures
import json
import os
import sys
import time
import urllib.error
import urllib.request

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
INDEX = "https://index.crates.io"
# An index file holds one line per published version; the largest are a few MiB.
MAX_INDEX_BYTES = 64 << 20
ATTEMPTS = 3


def index_path(name):
    """The sparse index's path of a crate (cargo's layout: by the name's length and letters)."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def published(name):
    """Every published version of `name`: {version: yanked}."""
    url = f"{INDEX}/{index_path(name)}"
    for attempt in range(ATTEMPTS):
        try:
            with urllib.request.urlopen(url, timeout=30) as reply:
                body = reply.read(MAX_INDEX_BYTES + 1)
            break
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return {}  # no such crate: every version of it is "not in the index"
            if attempt + 1 == ATTEMPTS:
                raise OSError(f"{url}: {error}") from error
            time.sleep(1 + attempt)
        except (urllib.error.URLError, TimeoutError) as error:
            if attempt + 1 == ATTEMPTS:
                raise OSError(f"{url}: {error}") from error
            time.sleep(1 + attempt)
    if len(body) > MAX_INDEX_BYTES:
        raise OSError(f"{url}: more than {MAX_INDEX_BYTES} bytes")
    versions = {}
    for line in body.decode("utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            versions[entry["vers"]] = bool(entry.get("yanked", False))
    return versions


def locked_packages(text):
    """The `[[package]]` tables of a Cargo.lock, as dicts of their string keys (the lock file's
    own simple TOML: no `tomllib` needed, which Python has only from 3.11)."""
    packages = []
    for line in text.splitlines():
        line = line.strip()
        if line == "[[package]]":
            packages.append({})
        elif line.startswith("[") or not packages:
            continue
        elif " = \"" in line and line.endswith('"'):
            key, value = line.split(" = ", 1)
            packages[-1][key] = value[1:-1]
    return packages


def problems(lock_path):
    """What is wrong with the packages `lock_path` locks, and how many it locks."""
    with open(lock_path, encoding="utf-8") as f:
        packages = locked_packages(f.read())
    found = []
    registry = []
    for package in packages:
        source = package.get("source")
        if source is None:
            continue  # a path package of the workspace
        if source != CRATES_IO:
            found.append(f"{package['name']} {package['version']}: from {source}, not crates.io")
        else:
            registry.append((package["name"], package["version"]))
    names = sorted({name for name, _ in registry})
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        index = dict(zip(names, pool.map(published, names)))
    for name, version in registry:
        yanked = index[name].get(version)
        if yanked is None:
            found.append(f"{name} {version}: not in crates.io's index")
        elif yanked:
            found.append(f"{name} {version}: yanked on crates.io")
    return found, len(registry)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    locks = sys.argv[1:] or [os.path.join(root, "Cargo.lock")]
    failed = False
    for lock in locks:
        try:
            found, count = problems(lock)
        except OSError as error:
            print(f"dependencies: cannot read crates.io's index: {error}", file=sys.stderr)
            sys.exit(2)
        for problem in found:
            print(f"dependencies: {lock}: {problem}", file=sys.stderr)
        failed |= bool(found)
        if not found:
            print(f"dependencies: {lock}: {count} packages from crates.io, none yanked")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
