"""Two reference-SDK agents negotiate (open, accept_session, counter, accept).

Prints one JSON object on stdout: the transcript the SDK produced, in the
gate's shape ({"messages": [...], "keys": {agent id: base64url key}}), and
the SDK's own signed session attestation with the keys of its parties.
Run by crates/concordia/tests/all/interop.rs with the interop venv's Python.
"""

import json
import sys

from concordia import Agent, BasicOffer, generate_attestation


def main() -> None:
    seller = Agent("seller")
    buyer = Agent("buyer")
    session = seller.open_session(
        counterparty=buyer.identity,
        terms={
            "item": {"value": "Canon EOS R5, 15K shutter count"},
            "price": {"value": 2200.00, "currency": "USD"},
            "delivery": {"value": "local_pickup"},
        },
        reasoning="Listing based on recent sold comps.",
    )
    buyer.join_session(session)
    buyer.accept_session()
    buyer.send_counter(
        BasicOffer(terms={"price": {"value": 1900.00, "currency": "USD"}, "delivery": {"value": "shipping"}}),
        reasoning="I prefer shipping and want a better price.",
    )
    seller.accept_offer()
    keys = {
        seller.agent_id: seller.key_pair.public_key_b64(),
        buyer.agent_id: buyer.key_pair.public_key_b64(),
    }
    attestation = generate_attestation(session, {"seller": seller.key_pair, "buyer": buyer.key_pair})
    json.dump(
        {
            "messages": session.transcript,
            "keys": keys,
            "state": session.state.value,
            "attestation": attestation,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
