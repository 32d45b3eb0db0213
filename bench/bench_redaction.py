"""``echo_core.redaction.redact`` on hostile input: no input makes it slower than linear.

    python bench/bench_redaction.py [--size 200000]

Each hostile text repeats a fragment that starts a rule's match and never completes it
(a key prefix, a scheme, a PEM header, an identifier with no ``=``...) up to ``--size``
characters, then the same at twice the size. Prints the seconds of each and the ratio;
exits 1 when any text takes more than ``MAX_SECONDS`` at the larger size or its time more
than ``MAX_RATIO`` times when its size doubles (a quadratic pattern quadruples). A timed
bench, not a unit test: a loaded machine never fails the suite.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from echo_core.redaction import redact, strip_private

MAX_SECONDS = 2.0
MAX_RATIO = 3.0

#: name -> the fragment repeated (each aims at one rule's worst case)
FRAGMENTS: dict[str, str] = {
    "sk-prefixes": "sk-",
    "sk-ant-prefixes": "sk-ant-",
    "key-run-no-digit": "sk-" + "a" * 50 + " ",
    "identifier-no-equals": "A_",
    "names-ending-key": "MY_SECRET_KEY ",
    "equals-run": "=",
    "colon-run": "TOKEN:",
    "schemes": "a://",
    "user-no-at": "http://user:pass",
    "pem-headers": "-----BEGIN PRIVATE KEY-----",
    "pem-begin-end-mismatch": "-----BEGIN RSA PRIVATE KEY-----x-----END",
    "bearer-spaces": "bearer      ",
    "authorization": "Authorization: Bearer ",
    "aws-context": "aws_secret=",
    "jwt-halves": "eyJabcdefghij.",
    "base64-run": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123456789+/",
    "private-opens": "<private>",
    "private-closes": "</private>",
    "hex-run": "0123456789abcdef",
    "slack": "xoxb-",
    "quotes": "PASSWORD=\"",
}


def _time(text: str) -> float:
    start = time.perf_counter()
    redact(text)
    strip_private(text)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=200_000)
    args = parser.parse_args(argv)
    failed = []
    print(f"{'input':<24} {'size':>8} {'seconds':>9} {'x2 size':>9} {'ratio':>6}")
    for name, fragment in FRAGMENTS.items():
        small = (fragment * (args.size // len(fragment) + 1))[:args.size]
        big = small + small
        _time(small[:1000])  # compile the patterns outside the timing
        t1 = max(_time(small), 1e-4)
        t2 = _time(big)
        ratio = t2 / t1
        bad = t2 > MAX_SECONDS or (t2 > 0.05 and ratio > MAX_RATIO)
        failed += [name] if bad else []
        print(f"{name:<24} {len(small):>8} {t1:>9.4f} {t2:>9.4f} {ratio:>6.2f}"
              + ("  SLOW" if bad else ""))
    if failed:
        print(f"slower than linear: {', '.join(failed)}")
        return 1
    print("all linear")
    return 0


if __name__ == "__main__":
    sys.exit(main())
