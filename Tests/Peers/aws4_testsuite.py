#!/usr/bin/env python3
"""Prints the folder of AWS's Signature Version 4 test suite, fetched at test time and never committed.

botocore's source distribution on PyPI carries the suite under tests/unit/auth/aws4_testsuite. The first run
downloads it with pip (no wheel: the wheel leaves the tests out), from one fixed version (VERSION), so that a
release of botocore cannot change what the tests check, and extracts that folder alone into
CACHE/aws4_testsuite-VERSION; later runs print the folder at once. Exits 1, saying why on stderr, when it cannot.

    aws4_testsuite.py CACHE
"""
import pathlib
import subprocess
import sys
import tarfile
import tempfile

PREFIX = "tests/unit/auth/aws4_testsuite/"
# The botocore release whose copy of the suite the tests check against; change it on purpose, never by a release.
VERSION = "1.43.11"


def main() -> int:
    cache = pathlib.Path(sys.argv[1])
    suite = cache / f"aws4_testsuite-{VERSION}"
    if (suite / "get-vanilla" / "get-vanilla.req").is_file():
        print(suite)
        return 0
    with tempfile.TemporaryDirectory() as download:
        fetched = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
             "--no-binary", ":all:", "-d", download, f"botocore=={VERSION}"],
            capture_output=True, text=True)
        archives = list(pathlib.Path(download).glob("botocore-*.tar.gz"))
        if fetched.returncode != 0 or not archives:
            sys.stderr.write(f"pip download botocore=={VERSION} failed: {fetched.stderr.strip()[-500:]}\n")
            return 1
        cache.mkdir(parents=True, exist_ok=True)
        staging = pathlib.Path(tempfile.mkdtemp(dir=cache))
        with tarfile.open(archives[0]) as archive:
            for member in archive.getmembers():
                relative = member.name.split("/", 1)[1] if "/" in member.name else ""
                if not relative.startswith(PREFIX) or not (member.isfile() or member.isdir()):
                    continue
                target = staging / relative[len(PREFIX):]
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.extractfile(member).read())
    staging.rename(suite)
    print(suite)
    return 0


if __name__ == "__main__":
    sys.exit(main())
