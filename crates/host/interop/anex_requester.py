"""A counterparty agent speaking ANEX over A2A with the A2A reference SDK
(a2a-sdk 1.3), written from docs/anex-binding.md alone. It asks an
organization's host for supplier-onboarding data.

Driven by crates/host/tests/all/a2a_interop.rs against a real host process.
It prints one JSON object per line on stdout:

  {"step": "checks", ...}     the card, refusals without the extension / token
  {"step": "within", ...}     a CFP within policy: answered at once, accepted
  {"step": "v03", ...}        the same through the SDK's v0.3 compatibility layer
  {"step": "waiting", ...}    a CFP beyond policy waits for the owner
  {"step": "done", ...}       after the person decided: the answer, the
                              acceptance, the data, the refused request

Counterparty text is data here too: nothing it carries is executed.
"""

import argparse
import asyncio
import json
import sys
import time

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.auth.credentials import InMemoryContextCredentialStore
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.client.client import ClientCallContext
from a2a.client.service_parameters import (
    ServiceParametersFactory,
    with_a2a_extensions,
)
from a2a.types import a2a_pb2 as pb
from a2a.types.a2a_pb2 import AgentCard
from google.protobuf import json_format, struct_pb2

URI = "urn:countersign:anex:a2a:v1"
ME = "did:web:supplier.example"


def say(obj):
    print(json.dumps(obj), flush=True)


def data_part(message: dict) -> pb.Part:
    value = struct_pb2.Value()
    json_format.ParseDict(message, value)
    return pb.Part(data=value)


def part_data(part) -> dict:
    return json_format.MessageToDict(part.data)


def state_name(task) -> str:
    return pb.TaskState.Name(task.status.state)


def awaiting(task) -> str:
    meta = json_format.MessageToDict(task.metadata)
    return meta.get(URI, {}).get("awaiting")


def status_anex(task):
    if not task.status.HasField("message"):
        return None
    return part_data(task.status.message.parts[0])


class Requester:
    def __init__(self, client, ctx, agent):
        self.client = client
        self.ctx = ctx
        self.agent = agent
        self.n = 0

    def anex(self, conv, performative, protocol, message_id, content, reply=None):
        m = {
            "performative": performative,
            "sender": ME,
            "receiver": self.agent,
            "content": content,
            "language": "JSON",
            "ontology": "ANEX-Ontology",
            "protocol": protocol,
            "conversation_id": conv,
            "message_id": message_id,
        }
        if reply:
            m["in_reply_to"] = reply
        return m

    async def send(self, anex_message, task=None, context=None, ctx=None):
        self.n += 1
        kwargs = {}
        if task is not None:
            kwargs["task_id"] = task
        if context is not None:
            kwargs["context_id"] = context
        request = pb.SendMessageRequest(
            message=pb.Message(
                message_id=f"a2a-{self.n}",
                role=pb.ROLE_USER,
                parts=[data_part(anex_message)],
                extensions=[URI],
                **kwargs,
            )
        )
        last = None
        async for event in self.client.send_message(request, context=ctx or self.ctx):
            last = event
        return last

    def cfp(self, conv, access, promise):
        return self.anex(
            conv,
            "CFP",
            "ANEX-Negotiation",
            "m1",
            {
                "request": {
                    "identity": ME,
                    "owner": "Northwind Supplies Ltd",
                    "relation": "new supplier (introduced by procurement)",
                    "request_type": "supplier onboarding",
                    "access": access,
                    "promise": promise,
                }
            },
        )

    async def accept(self, conv, task, propose):
        msg = self.anex(
            conv,
            "ACCEPT-PROPOSAL",
            "ANEX-Negotiation",
            "m2",
            {"terms": propose["content"]["response"]},
            reply=propose["message_id"],
        )
        return (await self.send(msg, task=task.id, context=task.context_id)).task

    async def ask_data(self, conv, context, message_id, items):
        msg = self.anex(
            conv, "REQUEST", "ANEX-Data-Exchange", message_id, {"access": items}
        )
        task = (await self.send(msg, context=context)).task
        return state_name(task), status_anex(task)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", required=True)
    p.add_argument("--org", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--wait", type=float, default=60)
    args = p.parse_args()

    url = f"{args.host}/a2a/{args.org}"
    store = InMemoryContextCredentialStore()
    await store.set_credentials("anex", "anexBearer", args.token)
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, url).get_agent_card()
    factory = ClientFactory(ClientConfig(streaming=False))
    client = factory.create(card, interceptors=[AuthInterceptor(store)])
    ext = card.capabilities.extensions[0]
    agent = json_format.MessageToDict(ext.params)["agent"]
    ctx = ClientCallContext(
        state={"sessionId": "anex"},
        service_parameters=ServiceParametersFactory.create([with_a2a_extensions([URI])]),
    )
    r = Requester(client, ctx, agent)

    # Refused: the extension not activated; no token at all.
    checks = {"step": "checks", "extension_uri": ext.uri, "required": ext.required, "agent": agent}
    try:
        await r.send(r.cfp("conv-noext", ["legal_name(m)"], []), ctx=ClientCallContext(state={"sessionId": "anex"}))
        checks["without_extension"] = "accepted"
    except Exception as e:  # the SDK raises its mapped error class
        checks["without_extension"] = type(e).__name__
    anonymous = await ClientFactory(ClientConfig(streaming=False)).create_from_url(url)  # resolves the card itself
    try:
        await Requester(anonymous, ctx, agent).send(r.cfp("conv-anon", ["legal_name(m)"], []))
        checks["without_token"] = "accepted"
    except Exception as e:
        checks["without_token"] = f"{type(e).__name__}: {e}"[:200]
    say(checks)

    # 1. Within policy: answered at once.
    conv = "conv-within"
    started = time.monotonic()
    task = (await r.send(r.cfp(conv, ["legal_name(m)", "ap_contact"], ["no retention beyond 90 days"]))).task
    answered_in = time.monotonic() - started
    propose = status_anex(task)
    within = {
        "step": "within",
        "state": state_name(task),
        "awaiting": awaiting(task),
        "answer": propose,
        "answered_in_s": round(answered_in, 3),
    }
    done = await r.accept(conv, task, propose)
    within["accepted_state"] = state_name(done)
    within["artifact"] = part_data(done.artifacts[0].parts[0]) if done.artifacts else None
    say(within)

    # The same through the SDK's v0.3 compatibility layer: the card's 0.3
    # interface alone (message/send, tasks/get, tasks/cancel).
    card03 = AgentCard()
    card03.CopyFrom(card)
    keep = [i for i in card03.supported_interfaces if i.protocol_version == "0.3"]
    del card03.supported_interfaces[:]
    card03.supported_interfaces.extend(keep)
    old_client = factory.create(card03, interceptors=[AuthInterceptor(store)])
    r03 = Requester(old_client, ctx, agent)
    task = (await r03.send(r03.cfp("conv-v03", ["legal_name(m)"], []))).task
    v03 = {
        "step": "v03",
        "transport": type(getattr(old_client, "_transport", None)).__name__,
        "state": state_name(task),
        "answer": status_anex(task)["performative"],
    }
    got = await old_client.get_task(pb.GetTaskRequest(id=task.id), context=ctx)
    v03["get_state"] = state_name(got)
    canceled = await old_client.cancel_task(pb.CancelTaskRequest(id=task.id), context=ctx)
    v03["cancel_state"] = state_name(canceled)
    say(v03)

    # 2. Beyond policy: the task waits for the owner.
    conv = "conv-beyond"
    task = (await r.send(r.cfp(conv, ["legal_name(m)", "tax_id(m)", "bank_details(m)", "ap_contact"], ["no retention beyond 90 days"]))).task
    say({
        "step": "waiting",
        "state": state_name(task),
        "awaiting": awaiting(task),
        "has_status_message": task.status.HasField("message"),
        "task_id": task.id,
        "context_id": task.context_id,
    })
    deadline = time.monotonic() + args.wait
    polls = 0
    while awaiting(task) == "owner":
        if time.monotonic() > deadline:
            say({"step": "done", "error": "the owner did not decide in time"})
            return 1
        await asyncio.sleep(0.2)
        polls += 1
        task = await client.get_task(pb.GetTaskRequest(id=task.id), context=ctx)
    answer = status_anex(task)
    report = {"step": "done", "polls": polls, "state": state_name(task), "awaiting": awaiting(task), "answer": answer}
    if answer and answer["performative"] == "PROPOSE":
        done = await r.accept(conv, task, answer)
        report["accepted_state"] = state_name(done)
        report["artifact"] = part_data(done.artifacts[0].parts[0]) if done.artifacts else None
        accepted = answer["content"]["response"]["access"]
        report["data_state"], report["data"] = await r.ask_data(conv, task.context_id, "m3", accepted)
        report["refused_state"], report["refused"] = await r.ask_data(conv, task.context_id, "m4", ["ap_contact"])
    say(report)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
