"""The reference SDK's own verify_approval_receipt, on a receipt we built.

Reads {"receipt": ..., "offer": ..., "now": ISO 8601} on stdin. The issuer key
is taken from the receipt's approver did:key (multicodec 0xed01, base58btc),
decoded here without any Countersign code, so anyone can check it; an
"issuer_public_key_b64url" member, when given, is used instead. Prints the
SDK's result (valid, decision, failure_reason, checks) as JSON.
"""

import json
import sys
from datetime import datetime

from concordia.approval_receipt import verify_approval_receipt
from concordia.signing import public_key_from_b64url

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def did_key_public_key(did: str) -> bytes:
    assert did.startswith("did:key:z"), did
    number = 0
    text = did[len("did:key:z"):].split("#")[0]
    for ch in text:
        number = number * 58 + ALPHABET.index(ch)
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\x00" * (len(text) - len(text.lstrip("1"))) + raw
    assert raw[:2] == b"\xed\x01" and len(raw) == 34, raw
    return raw[2:]


def main() -> None:
    request = json.load(sys.stdin)
    receipt = request["receipt"]
    if "issuer_public_key_b64url" in request:
        key = bytes(public_key_from_b64url(request["issuer_public_key_b64url"]).public_bytes_raw())
    else:
        key = did_key_public_key(receipt["approver"]["identity"])
    now = datetime.fromisoformat(request["now"].replace("Z", "+00:00"))
    result = verify_approval_receipt(receipt, request["offer"], now=now, issuer_public_key=key)
    json.dump(result.to_dict(), sys.stdout)


if __name__ == "__main__":
    main()
