"""The reference SDK's own verification of a transcript file, for the benchmark.

Reads a file {"messages": [...], "keys": {agent id: key}} and checks what the
SDK checks: validate_chain (genesis and every prev_hash link) and every
message's signature with verify_signature under its sender's key. Prints
{"messages": n, "links": bool, "signatures_failed": k, "seconds": t}, the
time covering reading, parsing and verifying (not interpreter start-up).
"""

import json
import sys
import time

from concordia.message import validate_chain
from concordia.signing import public_key_from_b64url, verify_signature


def main() -> None:
    start = time.perf_counter()
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    keys = {agent: public_key_from_b64url(k) for agent, k in doc["keys"].items()}
    messages = doc["messages"]
    links = validate_chain(messages)
    failed = sum(
        0 if verify_signature(m, m.get("signature", ""), keys[m["from"]["agent_id"]]) else 1
        for m in messages
    )
    elapsed = time.perf_counter() - start
    json.dump({"messages": len(messages), "links": links, "signatures_failed": failed, "seconds": elapsed}, sys.stdout)


if __name__ == "__main__":
    main()
