"""The reference SDK's canonical JSON (concordia.signing.canonical_json) of
each JSON text given, one per line on stdin. Prints a JSON list: the
canonical text, or null where the SDK refuses the value (e.g. -0.0)."""

import json
import sys

from concordia.canonicalization import canonicalize_jcs


def main() -> None:
    out = []
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        try:
            out.append(canonicalize_jcs(json.loads(line)).decode("utf-8"))
        except ValueError:
            out.append(None)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
