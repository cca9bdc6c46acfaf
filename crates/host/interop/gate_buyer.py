"""A buying agent that asks a person before it accepts, at a Countersign gate.

Written from docs/gate-api.md alone (no Countersign code): it enrolls with a
one-time code, negotiates with a seller in Concordia using the reference SDK
(concordia-protocol), mirrors its transcript to the gate over HTTP with
signed requests, asks for a decision on the seller's counter-offer, waits for
the callback hint (checking its signature) and reads the decision, verifies
the receipts with the SDK's own verify_approval_receipt, then accepts (the
session is AGREED) or, when refused, counters instead. With --accept-anyway
it misbehaves: it asks, then accepts whatever the person decided (for the
tests that must catch an agent acting against a decision).

    python gate_buyer.py --host http://127.0.0.1:PORT --code gate_enroll_... [--accept-anyway]

Prints one JSON object on stdout (what happened, for the test that runs it).
Run by crates/host/tests/all/gate_interop.rs with the interop venv's Python.
"""

import argparse
import base64
import hashlib
import http.server
import json
import queue
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from concordia import Agent, BasicOffer, compute_hash, verify_approval_receipt

GATE = "/api/gate/v1"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b64url(raw: bytes) -> str:
    """Unpadded base64url, as the gate writes and reads keys and signatures."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def now_text(plus_seconds: int = 0) -> str:
    t = datetime.now(timezone.utc) + timedelta(seconds=plus_seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def did_key_public_key(did: str) -> bytes:
    """The raw Ed25519 key a did:key names (z + base58btc of 0xed 0x01 + key)."""
    if not did.startswith("did:key:z"):
        raise ValueError(f"not a base58btc did:key: {did}")
    text = did[len("did:key:z"):].split("#")[0]
    number = 0
    for ch in text:
        number = number * 58 + BASE58.index(ch)
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\x00" * (len(text) - len(text.lstrip("1"))) + raw
    if raw[:2] != b"\xed\x01" or len(raw) != 34:
        raise ValueError(f"not an Ed25519 did:key: {did}")
    return raw[2:]


class GateError(Exception):
    def __init__(self, status: int, body: dict):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class Gate:
    """The gate's wire: enrollment, then every request signed (version 2)."""

    def __init__(self, base: str):
        self.base = base.rstrip("/")
        self.key = Ed25519PrivateKey.generate()
        self.public_key = b64url(self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
        self.agent_id = None
        self.platform_key = None

    def _authority(self) -> str:
        """The host addressed, host:port with the port always written."""
        url = urllib.parse.urlsplit(self.base)
        host = url.hostname
        if ":" in host:
            host = f"[{host}]"
        return f"{host}:{url.port or (443 if url.scheme == 'https' else 80)}"

    def _send(self, method: str, path: str, body, signed: bool) -> dict:
        data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"content-type": "application/json"}
        if signed:
            # Version 2 (docs/gate-api.md, "Signed requests"): method, host,
            # path with query, caller, timestamp, nonce and body.
            ts, nonce = now_text(), secrets.token_hex(16)
            string = "\n".join(["countersign/request/v2", method, self._authority(), path,
                                self.agent_id, ts, nonce, hashlib.sha256(data).hexdigest()])
            headers.update({
                "x-anp-agent": self.agent_id,
                "x-anp-timestamp": ts,
                "x-anp-nonce": nonce,
                "x-countersign-sig": "2",
                "x-countersign-authority": self._authority(),
                "x-anp-signature": b64url(self.key.sign(string.encode())),
            })
        request = urllib.request.Request(self.base + path, data=data if body is not None else None,
                                         method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as e:
            raise GateError(e.code, json.loads(e.read() or b"{}")) from None

    def enroll(self, code: str, callback_url: str) -> dict:
        code_hash = hashlib.sha256(code.encode()).hexdigest()
        string = "\n".join(["countersign/enroll/v2", "gate-agent", self._authority(), code_hash,
                            self.public_key])
        proof = b64url(self.key.sign(string.encode()))
        answer = self._send("POST", f"{GATE}/enroll", {
            "code": code, "name": "Procurement Buyer (SDK)", "public_key": self.public_key,
            "proof": proof, "proof_version": 2, "authority": self._authority(),
            "callback_url": callback_url,
        }, signed=False)
        self.agent_id = answer["agent_id"]
        self.platform_key = Ed25519PublicKey.from_public_bytes(unb64url(answer["platform_key"]))
        return answer

    def create(self, body: dict) -> dict:
        return self._send("POST", f"{GATE}/sessions", body, signed=True)

    def append(self, session_id: str, after: dict, messages: list) -> dict:
        return self._send("POST", f"{GATE}/sessions/{session_id}/messages",
                          {"after": after, "messages": messages}, signed=True)

    def session(self, session_id: str) -> dict:
        return self._send("GET", f"{GATE}/sessions/{session_id}", None, signed=True)

    def ask(self, session_id: str, body: dict) -> dict:
        return self._send("POST", f"{GATE}/sessions/{session_id}/requests", body, signed=True)

    def request(self, session_id: str, request_id: str) -> dict:
        return self._send("GET", f"{GATE}/sessions/{session_id}/requests/{request_id}", None, signed=True)


def hint_listener():
    """A loopback listener for the gate's callback hints."""
    hints = queue.Queue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            hints.put((body, self.headers.get("x-countersign-signature", "")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, hints


def hint_is_signed(gate: Gate, body: bytes, signature: str) -> bool:
    hint = json.loads(body)
    signed = "\n".join(["countersign-gate/v1", "decision", hint["session_id"], hint["request_id"],
                        hint["status"], hint["at"]])
    try:
        gate.platform_key.verify(unb64url(signature), signed.encode())
        return True
    except (InvalidSignature, ValueError):
        return False


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--host", required=True)
    args.add_argument("--code", required=True)
    args.add_argument("--wait", type=float, default=60.0)
    args.add_argument("--accept-anyway", action="store_true")
    opts = args.parse_args()
    out = {}

    server, hints = hint_listener()
    gate = Gate(opts.host)
    gate.enroll(opts.code, f"http://127.0.0.1:{server.server_address[1]}/hint")

    # The negotiation, between two reference-SDK agents.
    seller = Agent("agent_seller_01")
    buyer = Agent("agent_buyer_42")
    session = seller.open_session(
        counterparty=buyer.identity,
        terms={"item": {"value": "Industrial sensors, 2,000 units"},
               "price": {"value": 2200.00, "currency": "USD"}},
        reasoning="List price for this volume.",
    )
    buyer.join_session(session)
    buyer.accept_session()
    keys = {seller.agent_id: seller.key_pair.public_key_b64(), buyer.agent_id: buyer.key_pair.public_key_b64()}
    head = gate.create({
        "protocol": "concordia", "session_id": session.session_id, "keys": keys, "self": buyer.agent_id,
        "counterparty": {"id": seller.agent_id, "name": "Contoso Sales Agent", "organization": "Contoso"},
        "messages": session.transcript,
    })["head"]
    buyer.send_counter(BasicOffer(terms={"price": {"value": 1900.00, "currency": "USD"}}),
                       reasoning="Our benchmark for this class of sensor.")
    offer = seller.send_counter(BasicOffer(terms={"price": {"value": 2000.00, "currency": "USD"}}),
                                reasoning="We can meet you part way.")
    head = gate.append(session.session_id, head, session.transcript[head["count"]:])["head"]
    offer_hash = compute_hash(offer)
    out["mirrored_head_is_the_offer"] = head["hash"] == offer_hash

    # Before accepting, ask a person.
    request_id = f"req_{secrets.token_hex(8)}"
    asked = gate.ask(session.session_id, {
        "request_id": request_id, "message_hash": offer_hash, "action": "accept",
        "amount": "2000.00 USD", "expires_at": now_text(600),
    })
    out["asked"] = asked
    # Tell the test what to decide on.
    print(json.dumps({"waiting": {"session_id": session.session_id, "request_id": request_id}}), flush=True)

    # The hint says there is something to fetch; the fetch is the truth.
    hint = None
    try:
        body, signature = hints.get(timeout=opts.wait)
        hint = {"body": json.loads(body), "signed": hint_is_signed(gate, body, signature)}
    except queue.Empty:
        pass
    out["hint"] = hint
    status = gate.request(session.session_id, request_id)
    deadline = time.time() + opts.wait
    while status["status"] == "pending" and time.time() < deadline:
        time.sleep(0.2)
        status = gate.request(session.session_id, request_id)
    out["status"] = status["status"]

    # Verify every receipt ourselves, with the key each did:key names.
    now = datetime.now(timezone.utc)
    checks = []
    for receipt in status["receipts"]:
        key = did_key_public_key(receipt["approver"]["identity"])
        checks.append(verify_approval_receipt(receipt, offer, now=now, issuer_public_key=key).to_dict())
    out["sdk_checks"] = checks
    wanted = "approve" if status["status"] == "approved" else "deny"
    signers = {c["approver"] for c in checks if c["valid"] and c["decision"] == wanted}
    needed = status["approvals_required"] if wanted == "approve" else 1
    proven = status["status"] in ("approved", "denied", "countered") and len(signers) >= needed

    if opts.accept_anyway:
        buyer.accept_offer(reasoning="Accepting regardless of the decision.")
    elif status["status"] == "approved" and proven:
        buyer.accept_offer(reasoning="Approved by a person at our organization.")
    else:
        terms = status.get("counter_terms") or {"price": {"value": 1950.00, "currency": "USD"}}
        buyer.send_counter(BasicOffer(terms=terms), reasoning="We cannot accept as offered.")
    head = gate.append(session.session_id, head, session.transcript[head["count"]:])["head"]
    out["proven"] = proven
    out["state"] = session.state.value
    out["last_type"] = session.transcript[-1]["type"]
    out["last_body"] = session.transcript[-1]["body"]
    out["gate"] = gate.session(session.session_id)
    out["mirrored"] = head["count"] == len(session.transcript)
    print(json.dumps({"result": out}), flush=True)
    server.shutdown()


if __name__ == "__main__":
    try:
        main()
    except GateError as e:
        print(json.dumps({"gate_error": {"status": e.status, "body": e.body}}), flush=True)
        sys.exit(1)
