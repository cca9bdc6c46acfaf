//! The rate limiter under many source addresses (issue 28, item 10), over
//! real HTTP through the trusted forwarded-for header: a full table evicts
//! instead of refusing everyone, and IPv6 clients count by their /64.

use std::time::Duration;

use countersign_host::{HostConfig, Limits};
use serde_json::Value;

use crate::common::*;

const ORG: &str = countersign_host::SANDBOX_HANDLE;

/// `GET /.well-known/anp.json` as if from `client` behind the trusted proxy.
async fn discovery_from(t: &TestHost, client: &str) -> u16 {
    t.http
        .get(t.url("/.well-known/anp.json"))
        .header("x-forwarded-for", client)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn addresses_filling_the_rate_limiter_lock_out_neither_a_new_address_nor_an_approver() {
    let t = start_with(HostConfig {
        limits: Limits {
            max_tracked_keys: 20,
            ..roomy_limits()
        },
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..HostConfig::default()
    })
    .await;
    let ann = t.enroll(ORG, "Ann", "ann@fabrikam.example").await;
    for n in 0..60u32 {
        let from = std::net::Ipv4Addr::from(0x0b00_0000 + n).to_string();
        assert_eq!(discovery_from(&t, &from).await, 200, "{from}");
    }
    assert_eq!(discovery_from(&t, "192.0.2.200").await, 200);
    let summary: Value = t.summary(&ann).await;
    assert!(summary.is_object());
    t.register("Newcomer").await;
}

#[tokio::test]
async fn ipv6_clients_are_counted_by_their_64() {
    let t = start_with(HostConfig {
        limits: Limits {
            per_ip: countersign_host::Limit {
                max: 2,
                window: Duration::from_secs(3600),
            },
            ..roomy_limits()
        },
        trusted_proxies: vec!["127.0.0.1".parse().unwrap()],
        ..HostConfig::default()
    })
    .await;
    assert_eq!(discovery_from(&t, "2001:db8:1:2::1").await, 200);
    assert_eq!(discovery_from(&t, "2001:db8:1:2:ffff::9").await, 200);
    assert_eq!(
        discovery_from(&t, "2001:db8:1:2:abcd:1:2:3").await,
        429,
        "a third address of the same /64"
    );
    assert_eq!(
        discovery_from(&t, "2001:db8:1:3::1").await,
        200,
        "another /64"
    );
}
