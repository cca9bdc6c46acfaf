//! Connecting to a host: plain HTTP is refused off this machine before
//! anything is sent; the person's lab override lets it through, and the
//! host then says so.

use countersign_engine::*;

use crate::common::*;

#[tokio::test]
async fn plain_http_to_another_machine_is_refused_before_anything_is_sent() {
    let world = World::start().await;
    let data = tempfile::tempdir().unwrap();
    let email = "ada@fabrikam.example";
    let engine = Engine::open(test_config(data.path(), email)).unwrap();
    let profile = engine.approver_profile();
    let code = world.code(email).await;

    // An address on no network this test has: refused at once, as plain HTTP.
    let err = engine
        .connect_host("http://192.0.2.1:8080", &code)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "plain_http", "{err}");
    assert!(
        err.to_string().starts_with(
            "http://192.0.2.1:8080 is plain HTTP to another machine: the enrollment code and the host's key would cross the network unencrypted"
        ),
        "{err}"
    );

    // A real host that knows itself by its IPv4-mapped IPv6 name (its
    // public URL: the authority version 2 enrollment proofs must name), so
    // only the console's rule stands between the two. Not a loopback name,
    // so refused too, and nothing reached it: the code is still unused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mapped = format!("http://[::ffff:127.0.0.1]:{port}");
    let lab = tempfile::tempdir().unwrap();
    let lab_host = countersign_host::Host::open(
        &lab.path().join("host.sqlite3"),
        countersign_host::HostConfig {
            public_url: Some(mapped.clone()),
            ..countersign_host::HostConfig::default()
        },
    )
    .await
    .unwrap();
    let lab_org = lab_host
        .create_org("Fabrikam Lab")
        .await
        .unwrap()
        .org_handle;
    let code = lab_host
        .enroll_code(&lab_org, "Ada", email)
        .await
        .unwrap()
        .code;
    let _running = lab_host
        .clone()
        .spawn(&format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let err = engine.connect_host(&mapped, &code).await.unwrap_err();
    assert_eq!(err.code(), "plain_http", "{err}");
    assert!(
        err.to_string()
            .contains("tick \u{201c}Allow plain HTTP to this host (lab only)\u{201d}"),
        "{err}"
    );
    assert!(engine.hosts().await.unwrap().is_empty());

    // With the person's override the same code enrolls, and the host says
    // it is reached in the clear.
    let host = engine
        .connect_host_with(&mapped, &code, &profile, true)
        .await
        .unwrap();
    assert!(host.reachable, "{:?}", host.last_error);
    assert!(host.plain_http);
    assert!(host.plain_http_allowed_at.is_some());
    let listed = engine.hosts().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].plain_http);
    assert_eq!(listed[0].plain_http_allowed_at, host.plain_http_allowed_at);
}

#[tokio::test]
async fn plain_http_on_loopback_connects_as_before_with_no_warning() {
    let world = World::start().await;
    let (_data, engine) = world.engine("ada@fabrikam.example").await;
    let hosts = engine.hosts().await.unwrap();
    assert!(world.url.starts_with("http://127.0.0.1:"), "{}", world.url);
    assert!(!hosts[0].plain_http);
    assert_eq!(hosts[0].plain_http_allowed_at, None);
}
