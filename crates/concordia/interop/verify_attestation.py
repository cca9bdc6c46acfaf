"""The reference SDK's own attestation checks.

Reads {"attestation", "public_keys_b64url", "countersigners"?} on stdin:
verify_attestation (schema, free-text scan, every party signature) and, for
each countersigner named, verify_attestation_countersignature. Prints
{"valid", "errors", "countersignatures"} as JSON.
"""

import json
import sys

from concordia.attestation import verify_attestation, verify_attestation_countersignature
from concordia.signing import public_key_from_b64url


def main() -> None:
    request = json.load(sys.stdin)
    att = request["attestation"]
    keys = {agent: public_key_from_b64url(k) for agent, k in request["public_keys_b64url"].items()}
    result = verify_attestation(att, keys)
    countersigned = {}
    for agent in request.get("countersigners") or []:
        sig = (att.get("countersignatures") or {}).get(agent)
        countersigned[agent] = isinstance(sig, str) and verify_attestation_countersignature(att, sig, keys[agent])
    valid = result.valid and all(countersigned.values())
    json.dump({"valid": valid, "errors": result.errors, "countersignatures": countersigned}, sys.stdout)


if __name__ == "__main__":
    main()
