//! What every scripted gate agent of the sandbox shares (the Concordia
//! buying agent, the OANP buyer): its key and state kept in a file beside the
//! embedded host's database (owner-only: it holds the demo's keys), its
//! enrollment at the host's gate with a code the host's admin issues, the
//! mirroring of its log (the whole log on the first call, then what the gate
//! does not hold yet, after the head it holds), the question it asks before
//! accepting, and the loop that runs it, saving its state whenever a turn
//! changed it, so a restart continues the same session and sends nothing
//! twice. Each demo talks to the host only over the real HTTP gate API.

use std::path::Path;
use std::time::Duration;

use countersign_client::{raw_messages, GateClient};
use countersign_host_api::gate::{
    CreateSession, GateAction, GateRequestStatus, Head, RequestDecision,
};
use ed25519_dalek::SigningKey;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::SandboxError;
use crate::{DemoHost, IoFuture};

/// How long each question to the gate stands.
pub(crate) const ASK_SECS: i64 = 3 * 24 * 3600;

/// A demo's failure, naming the demo (`the OANP demo: …`).
pub(crate) fn demo_error(demo: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Failed(format!("{demo}: {e}"))
}

fn shared_error(e: impl std::fmt::Display) -> SandboxError {
    demo_error("a sandbox demo", e)
}

/// A key seed as kept in a state file (base64url).
pub(crate) fn key_text(key: &SigningKey) -> String {
    jcs::b64url::encode(&key.to_bytes())
}

/// The key a state file keeps.
pub(crate) fn key_of(text: &str) -> Result<SigningKey, SandboxError> {
    let bytes = jcs::b64url::decode(text).map_err(shared_error)?;
    let seed: [u8; 32] = bytes
        .try_into()
        .map_err(|_| shared_error("a stored key is not 32 bytes"))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Now plus `offset_secs`, as the engine writes a time (RFC 3339 UTC).
pub(crate) fn now_text(offset_secs: i64) -> String {
    countersign_engine::format_time(
        OffsetDateTime::now_utc() + time::Duration::seconds(offset_secs),
    )
}

/// A demo's state, when its file holds one it can read.
pub(crate) fn load<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Keeps a demo's state (it holds the demo's private keys: owner-only).
pub(crate) fn save<T: Serialize>(path: &Path, state: &T) -> Result<(), SandboxError> {
    let text = serde_json::to_string(state).map_err(shared_error)?;
    countersign_engine::owner_only::write(path, text.as_bytes())?;
    Ok(())
}

/// Enrolls a new agent named `name` for `protocol` at the sandbox host's
/// gate, with a one-time code the host's admin issues, as an admin would:
/// its new key and the gate's id for it.
pub(crate) async fn enroll(
    sandbox: &DemoHost,
    name: &str,
    protocol: &str,
) -> Result<(SigningKey, String), SandboxError> {
    let key = SigningKey::generate(&mut rand::rngs::OsRng);
    let code = sandbox
        .host
        .gate_enroll_code(countersign_host::SANDBOX_HANDLE, name, protocol)
        .await
        .map_err(shared_error)?;
    let enrolled = GateClient::enroll(&sandbox.url, &code.code, name, &key, None)
        .await
        .map_err(shared_error)?;
    Ok((key, enrolled.agent_id))
}

/// The question a demo agent has asked and not yet acted on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Asked {
    /// The gate request's id.
    pub request_id: String,
    /// The awaited message's index in the log.
    pub index: usize,
}

/// What the loop does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Look again in a second.
    Wait,
    /// The negotiation is over.
    Done,
}

/// A demo's log as the gate should hold it.
pub(crate) struct Log<'s> {
    /// The session's id at the gate.
    pub session_id: &'s str,
    /// The whole log, in order.
    pub messages: &'s [Value],
    /// How many of them the gate holds.
    pub mirrored: &'s mut usize,
    /// A message's hash as the protocol links it.
    pub hash: fn(&Value) -> Result<String, SandboxError>,
}

/// Mirrors what the gate does not hold yet: on the first call the session,
/// as `opening` describes it (its `messages` filled in here), then each
/// later batch after the head the gate holds.
pub(crate) async fn mirror(
    gate: &GateClient,
    log: Log<'_>,
    opening: impl FnOnce() -> Result<CreateSession, SandboxError>,
) -> Result<(), SandboxError> {
    let mirrored = *log.mirrored;
    if mirrored == log.messages.len() {
        return Ok(());
    }
    if mirrored > log.messages.len() {
        return Err(shared_error(
            "its state file says the gate holds more messages than it kept",
        ));
    }
    if mirrored == 0 {
        let mut create = opening()?;
        create.messages = raw_messages(log.messages).map_err(shared_error)?;
        gate.create_session(&create).await.map_err(shared_error)?;
    } else {
        let after = Head {
            count: mirrored as u64,
            hash: (log.hash)(&log.messages[mirrored - 1])?,
        };
        gate.append(log.session_id, &after, &log.messages[mirrored..])
            .await
            .map_err(shared_error)?;
    }
    *log.mirrored = log.messages.len();
    Ok(())
}

/// Asks the gate for a person's decision on accepting the message at
/// `index` (its hash `message_hash`), numbering the request after the
/// `requests` made so far.
pub(crate) async fn ask(
    gate: &GateClient,
    session_id: &str,
    index: usize,
    message_hash: String,
    amount: Option<String>,
    requests: &mut u32,
) -> Result<Asked, SandboxError> {
    let request_id = format!("req-{}", *requests + 1);
    let ask = RequestDecision {
        request_id: request_id.clone(),
        message_hash,
        action: GateAction::Accept,
        amount,
        expires_at: now_text(ASK_SECS),
    };
    gate.request_decision(session_id, &ask)
        .await
        .map_err(shared_error)?;
    *requests += 1;
    Ok(Asked { request_id, index })
}

/// The host's answer to `asked` once it is settled (approved, denied,
/// countered, expired or superseded), with the awaited message from the
/// demo's `messages`; `None` while it still waits.
pub(crate) async fn settled(
    gate: &GateClient,
    session_id: &str,
    asked: &Asked,
    messages: &[Value],
) -> Result<Option<(GateRequestStatus, Value)>, SandboxError> {
    let status = gate
        .request(session_id, &asked.request_id)
        .await
        .map_err(shared_error)?;
    if !status.status.is_final() {
        return Ok(None);
    }
    let awaited = messages
        .get(asked.index)
        .cloned()
        .ok_or_else(|| shared_error("its state file names an awaited message it does not hold"))?;
    Ok(Some((status, awaited)))
}

/// A demo agent's state, played one turn at a time.
pub(crate) trait Script: Serialize + DeserializeOwned + Send {
    /// The agent's key (as kept) and the gate's id for it.
    fn agent(&self) -> (&str, &str);
    /// One turn: mirror, ask, or act on a decision.
    fn step<'a>(&'a mut self, gate: &'a GateClient) -> IoFuture<'a, Result<Next, SandboxError>>;
}

/// Runs a demo against the sandbox for as long as it runs: its state from
/// `file` in the sandbox's directory, or, on first launch, what `begin`
/// makes (kept at once, before anything is sent).
pub(crate) async fn run<S: Script, F>(
    sandbox: &DemoHost,
    file: &str,
    begin: impl FnOnce() -> F,
) -> Result<(), SandboxError>
where
    F: std::future::Future<Output = Result<S, SandboxError>>,
{
    let path = sandbox.dir.join(file);
    let state = match load::<S>(&path) {
        Some(state) => state,
        None => {
            let state = begin().await?;
            save(&path, &state)?;
            state
        }
    };
    let (key, agent_id) = state.agent();
    let gate = GateClient::new(&sandbox.url, key_of(key)?, agent_id).map_err(shared_error)?;
    drive(&path, &gate, state).await
}

/// Plays `state` against the gate until the negotiation is over, keeping
/// it in `path` after every turn that changed it.
async fn drive<S: Script>(
    path: &Path,
    gate: &GateClient,
    mut state: S,
) -> Result<(), SandboxError> {
    let text = |s: &S| serde_json::to_string(s).map_err(shared_error);
    loop {
        let before = text(&state)?;
        let outcome = state.step(gate).await;
        if text(&state)? != before {
            save(path, &state)?;
        }
        match outcome {
            Ok(Next::Wait) => {}
            Ok(Next::Done) => return Ok(()),
            Err(e) => tracing::debug!("{e}"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
