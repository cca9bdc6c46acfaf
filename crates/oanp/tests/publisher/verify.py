"""The publisher's side of crates/oanp's comparison test (tests/all/publisher.rs).

Reads the cases file the Rust test writes (argv[1]) and prints one JSON
document: for every case, what ``valyzen.receipt.verify_receipt`` (valyzen
0.1.0) answers and, for cases without extra pins, the exit code of the SDK's
own CLI (``valyzen verify FILE [--log LOG] [--allow-test]``); and for every
canonical-JSON input, what ``rfc8785.dumps`` (0.1.4) writes.

Each receipt and log is read from the very text the Rust side reads, with
Python's ``json.loads``, as the SDK's CLI reads files.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

EXPECTED = {"valyzen": "0.1.0", "rfc8785": "0.1.4"}


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in EXPECTED}


def verify_case(case: dict, scratch: Path) -> dict:
    from valyzen.cli import main as cli
    from valyzen.keys import ARBITER_KEYS, ArbiterKey
    from valyzen.receipt import verify_receipt

    receipt = json.loads(case["receipt"])
    log = json.loads(case["log"]) if case.get("log") is not None else None
    trusted = dict(ARBITER_KEYS)
    for pin in case["pins"]:
        trusted[pin["kid"]] = ArbiterKey(pin["x"], pin["label"], pin["mode"])
    v = verify_receipt(receipt, log=log, trusted_keys=trusted, allow_test=case["allow_test"])
    out = {
        "name": case["name"],
        "ok": v.ok,
        "status": v.status,
        "kid": v.kid,
        "signer": {"kind": v.signer.kind, "label": v.signer.label, "mode": v.signer.mode},
        "checks": [{"id": c.id, "ok": c.ok, "skipped": c.skipped} for c in v.checks],
        "signed_terms": v.signed_terms,
        "cli_exit": None,
    }
    if not case["pins"]:
        receipt_path = scratch / "receipt.json"
        receipt_path.write_text(case["receipt"], encoding="utf-8")
        argv = ["verify", str(receipt_path)]
        if case.get("log") is not None:
            log_path = scratch / "log.json"
            log_path.write_text(case["log"], encoding="utf-8")
            argv += ["--log", str(log_path)]
        if case["allow_test"]:
            argv.append("--allow-test")
        lines: list[str] = []
        with redirect_stdout(io.StringIO()):
            out["cli_exit"] = cli(argv, out=lines.append)
    return out


def canonical(text: str) -> dict:
    import rfc8785

    try:
        return {"input": text, "output": rfc8785.dumps(json.loads(text)).decode("utf-8")}
    except rfc8785.CanonicalizationError as error:
        return {"input": text, "output": None, "error": type(error).__name__}


def main() -> int:
    found = versions()
    if found != EXPECTED:
        print(f"expected {EXPECTED}, found {found}: run `bash .ci/setup`", file=sys.stderr)
        return 3
    cases = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as scratch:
        results = [verify_case(case, Path(scratch)) for case in cases["cases"]]
    print(
        json.dumps(
            {
                "versions": found,
                "cases": results,
                "canonical": [canonical(text) for text in cases["canonical"]],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
