//! The sandbox's demo receipt: the publisher's development receipt, filed
//! once, never again once the person removed it.

use countersign_engine::*;

use crate::launch::launch;

const DEV: &[u8] = include_bytes!("../../../../vendor/oanp/fixtures/dev-receipt.json");

fn oanp(view: &ReceiptView) -> &OanpReceiptView {
    match &view.detail {
        ReceiptDetail::OanpReceipt(v) => v,
    }
}

#[tokio::test]
async fn the_sandbox_files_the_publishers_development_receipt_as_its_demo_once() {
    let data = tempfile::tempdir().unwrap();
    let open = || {
        let mut config = crate::launch::config_in(data.path());
        config.poll_interval = std::time::Duration::from_secs(3600);
        Engine::open(config).unwrap()
    };
    let engine = open();
    let engine = launch(engine).await;
    let rows = engine.receipts().await.unwrap().receipts;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].sandbox);
    assert!(rows[0].test_mode);
    assert!(
        !rows[0].proof,
        "test receipts are off until the person allows them"
    );
    assert_eq!(rows[0].file_name, "sandbox-dev-receipt.json");
    let view = engine.receipt_view(&rows[0].receipt_id).await.unwrap();
    let export = engine.export_receipt(&rows[0].receipt_id).await.unwrap();
    assert_eq!(
        std::fs::read(&export.receipt.path).unwrap(),
        DEV,
        "the vendored bytes"
    );
    assert_eq!(oanp(&view).signer.mode.as_deref(), Some("test"));
    engine.shutdown().await;
    drop(engine);

    let engine = open();
    let engine = launch(engine).await;
    assert_eq!(
        engine.receipts().await.unwrap().receipts.len(),
        1,
        "filed once across restarts"
    );
    let demo = engine.receipts().await.unwrap().receipts[0]
        .receipt_id
        .clone();
    engine.remove_receipt(&demo).await.unwrap();
    engine.shutdown().await;
    drop(engine);

    let engine = open();
    let engine = launch(engine).await;
    let list = engine.receipts().await.unwrap();
    assert!(
        list.receipts.is_empty(),
        "a demo the person removed is not filed again: {list:?}"
    );
    assert_eq!(list.removed.len(), 1);
    assert!(list.removed[0].sandbox);
    engine.shutdown().await;
}
