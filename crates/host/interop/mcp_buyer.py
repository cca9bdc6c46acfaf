"""A buying agent that asks a person through the host's MCP endpoint.

Written from docs/mcp.md and docs/gate-api.md alone: it enrolls at the gate
with a one-time code, prints its agent id and reads the MCP bearer token the
admin issued it (one line on stdin), negotiates with a seller in Concordia
using the reference SDK (concordia-protocol), mirrors the transcript to the
gate, then, as an MCP client on the official Python SDK (`mcp`), asks for a
decision on the seller's standing offer, waits once past a short bound
(still pending), waits again for the person, checks the receipt with the
host's check_receipt tool and with the SDK's own verify_approval_receipt,
and accepts only an approval it proved (else counters).

    python mcp_buyer.py --host http://127.0.0.1:PORT --code gate_enroll_...

Prints JSON lines on stdout: {"enrolled": …}, {"waiting": …}, {"result": …}.
Run by crates/host/tests/all/mcp.rs with the interop venv's Python.
"""

import argparse
import asyncio
import json
import os
import secrets
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx2  # the transport the mcp SDK is built on
from concordia import Agent, BasicOffer, compute_hash, verify_approval_receipt
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gate_buyer import GATE, Gate, GateError, did_key_public_key, now_text


def say(obj) -> None:
    print(json.dumps(obj), flush=True)


def structured(result) -> dict:
    """A tool's answer: its structured content, or its error text."""
    if result.is_error:
        return {"error": " ".join(getattr(c, "text", "") for c in result.content)}
    return result.structured_content


async def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--host", required=True)
    args.add_argument("--code", required=True)
    opts = args.parse_args()
    out = {}

    gate = Gate(opts.host)
    code = opts.code
    import hashlib
    string = "\n".join(["countersign/enroll/v2", "gate-agent", gate._authority(),
                        hashlib.sha256(code.encode()).hexdigest(), gate.public_key])
    from gate_buyer import b64url
    enrolled = gate._send("POST", f"{GATE}/enroll", {
        "code": code, "name": "Procurement Buyer (MCP)", "public_key": gate.public_key,
        "proof": b64url(gate.key.sign(string.encode())), "proof_version": 2,
        "authority": gate._authority(),
    }, signed=False)
    gate.agent_id = enrolled["agent_id"]
    say({"enrolled": gate.agent_id})
    token = sys.stdin.readline().strip()

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

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(75.0))
    async with Client(streamable_http_client(opts.host.rstrip("/") + "/mcp", http_client=http)) as mcp:
        tools = await mcp.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        request_id = f"req_{secrets.token_hex(8)}"
        # No message_hash: the host finds the seller's standing offer.
        asked = structured(await mcp.call_tool("request_decision", {
            "session_id": session.session_id, "request_id": request_id,
            "amount": "2000.00 USD", "expires_at": now_text(600),
        }))
        out["asked"] = asked
        out["asked_about_the_offer"] = asked.get("message_hash") == compute_hash(offer)
        # One bound passes with nobody deciding: still pending.
        out["after_bound"] = structured(await mcp.call_tool("wait_for_decision", {
            "session_id": session.session_id, "request_id": request_id, "wait_seconds": 1,
        }))
        say({"waiting": {"session_id": session.session_id, "request_id": request_id}})
        status = structured(await mcp.call_tool("wait_for_decision", {
            "session_id": session.session_id, "request_id": request_id,
        }))
        out["status"] = status.get("status")
        out["decision"] = status
        checks = []
        host_checks = []
        now = datetime.now(timezone.utc)
        for receipt in status.get("receipts", []):
            host_checks.append(structured(await mcp.call_tool("check_receipt", {
                "receipt": receipt, "session_id": session.session_id, "request_id": request_id,
            })))
            key = did_key_public_key(receipt["approver"]["identity"])
            checks.append(verify_approval_receipt(receipt, offer, now=now, issuer_public_key=key).to_dict())
        out["host_checks"] = host_checks
        out["sdk_checks"] = checks
        # A receipt changed by one character no longer checks.
        if status.get("receipts"):
            forged = json.loads(json.dumps(status["receipts"][0]))
            forged["scope"]["amount"] = "1.00 USD" if isinstance(forged["scope"].get("amount"), str) else forged["scope"]["amount"]
            forged["id"] = forged["id"][:-1] + ("0" if forged["id"][-1] != "0" else "1")
            out["forged_check"] = structured(await mcp.call_tool("check_receipt", {
                "receipt": forged, "offer": offer,
            }))
    await http.aclose()

    wanted = "approve" if status.get("status") == "approved" else "deny"
    signers = {c["approver"] for c in checks if c["valid"] and c["decision"] == wanted}
    proven = status.get("status") in ("approved", "denied", "countered") and len(signers) >= 1
    if status.get("status") == "approved" and proven:
        buyer.accept_offer(reasoning="Approved by a person at our organization.")
    else:
        terms = status.get("counter_terms") or {"price": {"value": 1950.00, "currency": "USD"}}
        buyer.send_counter(BasicOffer(terms=terms), reasoning="We cannot accept as offered.")
    head = gate.append(session.session_id, head, session.transcript[head["count"]:])["head"]
    out["proven"] = proven
    out["state"] = session.state.value
    out["last_type"] = session.transcript[-1]["type"]
    say({"result": out})


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except GateError as e:
        say({"gate_error": {"status": e.status, "body": e.body}})
        sys.exit(1)
