"""The reference SDK's own verification of a transcript file, for the benchmark.

Reads a file {"messages": [...], "keys": {agent id: key}} and checks it the
SDK's way: validate_chain (genesis and every prev_hash link) and every
message's signature with verify_signature under its sender's key. With
--replay it instead feeds every message to Session.apply_message, which is
how an SDK agent takes in a peer's messages (signature, session binding,
chain tip, state transition). Prints {"messages": n, "links": bool,
"signatures_failed": k, "seconds": t}, the time covering reading, parsing and
verifying (not interpreter start-up).
"""

import json
import sys
import time

from concordia.message import validate_chain
from concordia.session import Session
from concordia.signing import public_key_from_b64url, verify_signature
from concordia.types import TimingConfig


def main() -> None:
    start = time.perf_counter()
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    keys = {agent: public_key_from_b64url(k) for agent, k in doc["keys"].items()}
    messages = doc["messages"]
    if "--replay" in sys.argv:
        session = Session(session_id=messages[0]["session_id"], timing=TimingConfig(max_rounds=len(messages)))
        for m in messages:
            session.apply_message(m, keys.get)
        links, failed = True, 0
    else:
        links = validate_chain(messages)
        failed = sum(
            0 if verify_signature(m, m.get("signature", ""), keys[m["from"]["agent_id"]]) else 1
            for m in messages
        )
    elapsed = time.perf_counter() - start
    json.dump({"messages": len(messages), "links": links, "signatures_failed": failed, "seconds": elapsed}, sys.stdout)


if __name__ == "__main__":
    main()
