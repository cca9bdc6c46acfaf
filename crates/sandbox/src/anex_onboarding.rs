//! The sandbox's scripted ANEX counterparty: a supplier's onboarding agent
//! that asks the sandbox organization, over A2A JSON-RPC on loopback, for
//! its legal name, tax id, bank details and accounts-payable contact,
//! promising no retention beyond 90 days and no sharing. The sandbox policy
//! shares all but the bank details, so a new user meets an ANEX decision on
//! first launch. The agent reacts to the decision: terms proposed (as asked
//! or countered) are accepted and the accepted data asked for; a refusal
//! is answered with a narrower ask without the bank details, which the
//! policy answers at once.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::SandboxError;

/// The A2A extension the host's card declares (docs/anex-binding.md).
const EXTENSION: &str = "urn:countersign:anex:a2a:v1";
/// The onboarding agent's identity.
const IDENTITY: &str = "did:web:onboarding.northwind-supplies.example";
const OWNER: &str = "Northwind Supplies Ltd";
const PROMISES: [&str; 2] = [
    "no retention beyond 90 days",
    "no sharing with third parties",
];

/// The sandbox organization's ANEX policy: shares its legal name and AP
/// contact with anyone, its tax id with suppliers that promise not to
/// share it, and nothing else (its bank details need the owner).
const POLICY: &str = r#"{
  "anex_policy": 1,
  "terms_valid_days": 90,
  "rules": [
    { "items": ["legal_name", "ap_contact"], "anyone": true },
    { "items": ["tax_id"], "relations": ["supplier"], "promises": ["no sharing with third parties"] }
  ]
}"#;

/// What the sandbox organization may share.
const DATA: &str = r#"{
  "legal_name": "Sandbox Buyer Ltd",
  "tax_id": "GB 123 4567 89",
  "bank_details": { "iban": "GB33 BUKB 2020 1555 5555 55", "bic": "BUKBGB22" },
  "ap_contact": { "email": "ap@sandbox-buyer.example", "phone": "+44 20 7946 0000" }
}"#;

fn sandbox_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Failed(format!("ANEX demo: {e}"))
}

/// Where the agent is, kept across restarts in the sandbox folder.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct DemoState {
    /// Its bearer token (a sandbox token for a loopback host).
    token: String,
    /// How many conversations it opened.
    conversations: u32,
    /// The current conversation's id, A2A context and negotiation task.
    conversation: Option<String>,
    context: Option<String>,
    task: Option<String>,
    /// Messages sent in the current conversation.
    sent: u32,
    /// `asked`, `asked_again` (after a refusal), `done`.
    stage: String,
}

fn state_path(dir: &Path) -> std::path::PathBuf {
    dir.join("anex-demo.json")
}

fn save(dir: &Path, state: &DemoState) -> Result<(), SandboxError> {
    let bytes = serde_json::to_vec(state).map_err(sandbox_error)?;
    countersign_engine::owner_only::write(&state_path(dir), &bytes)?;
    Ok(())
}

fn load(dir: &Path) -> Option<DemoState> {
    serde_json::from_slice(&std::fs::read(state_path(dir)).ok()?).ok()
}

/// Loads the sandbox organization's ANEX policy and data, and registers the
/// onboarding agent once (its token kept in `dir`).
pub(crate) async fn prepare(
    host: &countersign_host::Host,
    org: &str,
    dir: &Path,
) -> Result<(), SandboxError> {
    host.load_anex_policy(org, POLICY)
        .await
        .map_err(sandbox_error)?;
    host.load_anex_data(org, DATA)
        .await
        .map_err(sandbox_error)?;
    if load(dir).is_none() {
        let issued = host
            .add_anex_counterparty(
                org,
                IDENTITY,
                "Northwind onboarding agent",
                Some("supplier"),
            )
            .await
            .map_err(sandbox_error)?;
        save(
            dir,
            &DemoState {
                token: issued.token,
                ..DemoState::default()
            },
        )?;
    }
    Ok(())
}

struct Agent {
    http: reqwest::Client,
    endpoint: String,
    /// The org's agent identity, as its card publishes it.
    receiver: String,
    state: DemoState,
}

impl Agent {
    fn message(
        &mut self,
        performative: &str,
        protocol: &str,
        reply: Option<&str>,
        content: Value,
    ) -> Value {
        self.state.sent += 1;
        let mut m = json!({
            "performative": performative,
            "sender": IDENTITY,
            "receiver": self.receiver,
            "content": content,
            "language": "JSON",
            "ontology": "ANEX-Ontology",
            "protocol": protocol,
            "conversation_id": self.state.conversation.clone().unwrap_or_default(),
            "message_id": format!("n{}", self.state.sent),
        });
        if let Some(r) = reply {
            m["in_reply_to"] = json!(r);
        }
        m
    }

    async fn rpc(&self, method: &str, params: Value) -> Result<Value, SandboxError> {
        let body = json!({"jsonrpc": "2.0", "id": "demo", "method": method, "params": params});
        let answer: Value = self
            .http
            .post(&self.endpoint)
            .bearer_auth(&self.state.token)
            .header("a2a-extensions", EXTENSION)
            .json(&body)
            .send()
            .await
            .map_err(sandbox_error)?
            .json()
            .await
            .map_err(sandbox_error)?;
        if let Some(error) = answer.get("error") {
            return Err(sandbox_error(format!("{method} refused: {error}")));
        }
        Ok(answer["result"].clone())
    }

    /// Sends one ANEX message; `negotiation` keeps the task as the current one.
    async fn send(&mut self, message: Value, task: Option<String>) -> Result<Value, SandboxError> {
        let mut a2a = json!({
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"data": message}],
            "extensions": [EXTENSION],
        });
        if let Some(c) = &self.state.context {
            a2a["contextId"] = json!(c);
        }
        if let Some(t) = task {
            a2a["taskId"] = json!(t);
        }
        let result = self.rpc("SendMessage", json!({"message": a2a})).await?;
        Ok(result["task"].clone())
    }

    /// Opens a new conversation with a CFP for `access`.
    async fn ask(&mut self, access: &[&str], stage: &str, dir: &Path) -> Result<(), SandboxError> {
        self.state.conversations += 1;
        self.state.conversation = Some(format!("sandbox-onboarding-{}", self.state.conversations));
        self.state.context = None;
        self.state.task = None;
        self.state.sent = 0;
        let cfp = self.message(
            "CFP",
            "ANEX-Negotiation",
            None,
            json!({"request": {
                "identity": IDENTITY,
                "owner": OWNER,
                "relation": "new supplier",
                "request_type": "supplier onboarding: paying your invoices",
                "access": access,
                "promise": PROMISES,
            }}),
        );
        let task = self.send(cfp, None).await?;
        self.state.context = task["contextId"].as_str().map(str::to_owned);
        self.state.task = task["id"].as_str().map(str::to_owned);
        self.state.stage = stage.to_owned();
        save(dir, &self.state)
    }

    /// One look at the negotiation task, and the agent's reaction.
    async fn react(&mut self, dir: &Path) -> Result<(), SandboxError> {
        let Some(task_id) = self.state.task.clone() else {
            return self
                .ask(
                    &[
                        "legal_name(m)",
                        "tax_id(m)",
                        "bank_details(m)",
                        "ap_contact",
                    ],
                    "asked",
                    dir,
                )
                .await;
        };
        let task = self.rpc("GetTask", json!({"id": task_id})).await?;
        let state = task["status"]["state"].as_str().unwrap_or("");
        let answer = &task["status"]["message"]["parts"][0]["data"];
        let awaiting = task["metadata"][EXTENSION]["awaiting"]
            .as_str()
            .unwrap_or("");
        if state == "TASK_STATE_INPUT_REQUIRED"
            && awaiting == "counterparty"
            && answer["performative"] == "PROPOSE"
        {
            // Proposed terms (as asked, countered, or by the policy): accept
            // them, then ask for exactly the accepted data.
            let terms = answer["content"]["response"].clone();
            let reply = answer["message_id"].as_str().map(str::to_owned);
            let accept = self.message(
                "ACCEPT-PROPOSAL",
                "ANEX-Negotiation",
                reply.as_deref(),
                json!({ "terms": terms.clone() }),
            );
            self.send(accept, Some(task_id)).await?;
            let request = self.message(
                "REQUEST",
                "ANEX-Data-Exchange",
                None,
                json!({ "access": terms["access"].clone() }),
            );
            self.send(request, None).await?;
            self.state.stage = "done".to_owned();
            return save(dir, &self.state);
        }
        if state == "TASK_STATE_REJECTED" && self.state.stage == "asked" {
            // Refused: ask again without the bank details.
            return self
                .ask(
                    &["legal_name(m)", "tax_id(m)", "ap_contact"],
                    "asked_again",
                    dir,
                )
                .await;
        }
        if matches!(
            state,
            "TASK_STATE_REJECTED" | "TASK_STATE_CANCELED" | "TASK_STATE_COMPLETED"
        ) {
            self.state.stage = "done".to_owned();
            return save(dir, &self.state);
        }
        Ok(())
    }
}

/// Runs the onboarding agent against the sandbox host at `url`, for as long
/// as the sandbox runs (its state in `dir`, written by [`prepare`]).
pub(crate) async fn run(url: &str, dir: &Path) -> Result<(), SandboxError> {
    let state = load(dir).ok_or_else(|| sandbox_error("the agent was not registered"))?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(sandbox_error)?;
    let endpoint = format!(
        "{}/a2a/{}",
        url.trim_end_matches('/'),
        countersign_host::SANDBOX_HANDLE
    );
    let card: Value = http
        .get(format!("{endpoint}/.well-known/agent-card.json"))
        .send()
        .await
        .map_err(sandbox_error)?
        .json()
        .await
        .map_err(sandbox_error)?;
    let receiver = card
        .pointer("/capabilities/extensions/0/params/agent")
        .and_then(Value::as_str)
        .ok_or_else(|| sandbox_error("the org's agent card names no ANEX agent"))?
        .to_owned();
    let mut agent = Agent {
        http,
        endpoint,
        receiver,
        state,
    };
    while agent.state.stage != "done" {
        if let Err(e) = agent.react(dir).await {
            tracing::debug!("{e}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(())
}
