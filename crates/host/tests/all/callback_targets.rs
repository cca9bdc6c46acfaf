//! Callbacks that point inside the network (issue 28, item 9): a gate
//! agent naming a loopback, private or IPv4-in-IPv6 callback is refused at
//! enrollment, over real HTTP, unless an admin allowed the network.

use countersign_host::callback::Network;
use countersign_host::HostConfig;

use crate::common::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

#[tokio::test]
async fn a_gate_agent_naming_an_internal_callback_is_refused_and_nothing_is_stored() {
    let t = start(roomy_limits()).await;
    let code = t
        .host()
        .gate_enroll_code(ORG, "Procurement Buyer", "concordia")
        .await
        .unwrap()
        .code;
    let key = anp::keys::generate_signing_key();
    for (url, why) in [
        ("http://127.0.0.1:9/hint", "uses http to 127.0.0.1"),
        ("http://127.3.4.5:9/hint", "uses http to 127.3.4.5"),
        ("https://127.0.0.1:9/hint", "a loopback address"),
        ("https://10.0.0.7/hint", "a private address"),
        ("https://[::ffff:127.0.0.1]/hint", "loopback"),
        ("https://[::127.0.0.1]/hint", "IPv4-compatible"),
        ("https://[64:ff9b::7f00:1]/hint", "NAT64"),
        ("https://[2002:7f00:1::]/hint", "6to4"),
        ("https://100.64.1.1/hint", "carrier-grade NAT"),
    ] {
        let (s, b) = t.gate_enroll(&code, &key, Some(url)).await;
        let body = String::from_utf8_lossy(&b);
        assert_eq!(s, 400, "{url}: {body}");
        assert!(body.contains("callback_url"), "{url}: {body}");
        assert!(body.contains(why), "{url}: {body}");
        assert!(body.contains("--allow-callback-network"), "{url}: {body}");
    }
    assert!(t.host().list_gate_agents().await.unwrap().is_empty());
    // The code was not spent by the refusals.
    let (s, b) = t.gate_enroll(&code, &key, None).await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
}

#[tokio::test]
async fn an_allowed_network_admits_its_callbacks_and_no_other() {
    let t = start_with(HostConfig {
        limits: roomy_limits(),
        callback_networks: vec![Network::parse("127.0.0.1/32").unwrap()],
        ..HostConfig::default()
    })
    .await;
    let code = |name: &'static str| {
        let host = t.host().clone();
        async move {
            host.gate_enroll_code(ORG, name, "concordia")
                .await
                .unwrap()
                .code
        }
    };
    let key = anp::keys::generate_signing_key();
    let (s, b) = t
        .gate_enroll(&code("A").await, &key, Some("http://127.0.0.2:9/hint"))
        .await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&b));
    let (s, b) = t
        .gate_enroll(&code("B").await, &key, Some("http://127.0.0.1:9/hint"))
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&b));
}
