"""The reference SDK's own verify_mandate on a mandate, at a given time.

Reads {"mandate", "issuer_public_key_b64url", "now", "action"?,
"delegation_public_keys_b64url"?} on stdin; revocation endpoints are not
contacted. Prints {"valid", "checks", "errors"} as JSON.
"""

import json
import sys
from datetime import datetime

from concordia.mandate import verify_mandate
from concordia.signing import public_key_from_b64url


def main() -> None:
    request = json.load(sys.stdin)
    delegation = {
        agent: public_key_from_b64url(key)
        for agent, key in (request.get("delegation_public_keys_b64url") or {}).items()
    }
    result = verify_mandate(
        request["mandate"],
        public_key_from_b64url(request["issuer_public_key_b64url"]),
        now=datetime.fromisoformat(request["now"].replace("Z", "+00:00")),
        action=request.get("action"),
        delegation_public_keys=delegation or None,
        check_revocation_status=False,
    )
    json.dump({"valid": result.valid, "checks": result.checks, "errors": result.errors}, sys.stdout)


if __name__ == "__main__":
    main()
