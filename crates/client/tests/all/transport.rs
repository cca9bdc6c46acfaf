//! Retries, timeouts and unreachable hosts, against real sockets.

use crate::common;

use std::time::Duration;

use anp::api::Target;
use anp::EventKind;
use common::{register, start_host, start_host_with_agent_limit, Mode, Proxy};
use countersign_client::{default_envelope, AgentClient, ClientConfig, ClientError, RetryPolicy};
use serde_json::json;

fn quick_retries() -> ClientConfig {
    ClientConfig {
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn idempotent_calls_are_retried_and_appends_are_not() {
    let host = start_host().await;
    let (proxy, proxy_url) = Proxy::start(&host.url()).await;
    let (key, agent_id) = register(&host.url()).await;
    let vendor = AgentClient::with_config(&proxy_url, key, &agent_id, quick_retries()).unwrap();
    let sid = vendor
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id;

    // Three 503s, then the GET gets through on the fourth try.
    proxy.set(Mode::FailGets(3));
    let status = vendor.status(&sid).await.unwrap();
    assert_eq!(status.session.event_count, 2);
    let gets = proxy
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, u)| m == "GET" && u.ends_with(&sid))
        .count();
    assert_eq!(gets, 4);

    // Bounded: four failures in a row are reported, with the host's words.
    proxy.set(Mode::FailGets(4));
    let err = vendor.status(&sid).await.unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (Some(503), Some("internal")),
        "{err}"
    );

    // A submission is tried once: a retry could append twice.
    proxy.set(Mode::AlwaysFail);
    let before = proxy.seen.lock().unwrap().len();
    let err = vendor
        .submit(&sid, EventKind::Message, json!({ "body": "hello" }))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(503), "{err}");
    assert_eq!(proxy.seen.lock().unwrap().len() - before, 1);
    host.shutdown().await;
}

#[tokio::test]
async fn a_silent_host_times_out_and_a_closed_port_is_a_transport_error() {
    let host = start_host().await;
    let (proxy, proxy_url) = Proxy::start(&host.url()).await;
    proxy.set(Mode::Hang);
    let config = ClientConfig {
        timeout: Duration::from_millis(300),
        retry: RetryPolicy::none(),
        ..ClientConfig::default()
    };
    let vendor = AgentClient::with_config(
        &proxy_url,
        anp::keys::generate_signing_key(),
        "0b5e7a0e-0000-4000-8000-000000000000",
        config,
    )
    .unwrap();
    let err = vendor
        .status("0b5e7a0e-0000-4000-8000-000000000001")
        .await
        .unwrap_err();
    match &err {
        ClientError::Transport { detail, .. } => {
            assert!(detail.contains("did not answer in time"), "{detail}")
        }
        other => panic!("expected Transport, got {other}"),
    }

    // A port nobody listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let err = countersign_client::well_known(&format!("http://{closed}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
    assert!(
        err.to_string().contains("could not reach the host"),
        "{err}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn rate_limits_are_retried_then_reported_in_the_hosts_words() {
    let host = start_host_with_agent_limit(3).await;
    let (key, agent_id) = register(&host.url()).await;
    let vendor = AgentClient::with_config(&host.url(), key, &agent_id, quick_retries()).unwrap();
    let sid = vendor
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id;
    vendor.status(&sid).await.unwrap();
    vendor.status(&sid).await.unwrap();
    let err = vendor.status(&sid).await.unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (Some(429), Some("rate_limited")),
        "{err}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn an_answer_larger_than_the_cap_is_refused_unread() {
    let host = start_host().await;
    let (key, agent_id) = register(&host.url()).await;
    let small = ClientConfig {
        max_response_bytes: 1024,
        ..ClientConfig::default()
    };
    let opener = AgentClient::new(&host.url(), key.clone(), &agent_id).unwrap();
    let sid = opener
        .open_session(
            Target::Sandbox { sandbox: true },
            default_envelope("Contoso", "Contoso Seller", "sales@contoso.example"),
        )
        .await
        .unwrap()
        .session_id;
    let vendor = AgentClient::with_config(&host.url(), key, &agent_id, small).unwrap();
    let err = vendor.log(&sid, None).await.unwrap_err();
    match &err {
        ClientError::Decode { detail, .. } => {
            assert!(detail.contains("larger than 1024 bytes"), "{detail}")
        }
        other => panic!("expected Decode, got {other}"),
    }
    host.shutdown().await;
}
