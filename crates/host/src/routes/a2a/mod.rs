//! ANEX over A2A (docs/anex-binding.md, "ANEX over A2A"): per organization
//! an A2A agent. Its card at `/a2a/{org}/.well-known/agent-card.json`, the
//! host's at `/.well-known/agent-card.json`; JSON-RPC at `POST /a2a/{org}`
//! (and `POST /a2a`, for the organization the credential names) with the
//! v1.0 methods and their v0.3 names. Every answer is a well-formed
//! JSON-RPC response; every authentication failure the same 401.

mod card;

pub use card::Listening;
pub mod wire;

use std::net::SocketAddr;

use anex::A2A_EXTENSION_URI;
use axum::body::Body;
use axum::extract::{ConnectInfo, Extension, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use self::wire::Dialect;
use crate::domain::anex::Refusal;
use crate::ratelimit::Scope;
use crate::service::anex::{self as service, Answer, Failure};
use crate::store::{AnexCounterpartyRow, Org};
use crate::Host;

/// Largest JSON-RPC request body: one ANEX message plus the A2A envelope.
pub const MAX_BODY_BYTES: usize = 524_288;
/// Deepest nesting a request body may have.
const MAX_DEPTH: usize = 32;

/// The A2A surface's routes (absolute paths).
pub fn router() -> Router<Host> {
    Router::new()
        .route(card::HOST_CARD_PATH, get(card::host_card))
        .route(
            "/a2a/{org}/.well-known/agent-card.json",
            get(card::org_card),
        )
        .route("/a2a", post(rpc_host))
        .route("/a2a/{org}", post(rpc_org))
}

/// A JSON-RPC error answer.
struct RpcError {
    status: StatusCode,
    /// Boxed: a `Value` is large where serde_json keeps member order, and
    /// the error travels in every `Result` here.
    id: Box<Value>,
    code: i64,
    message: String,
    reason: Option<&'static str>,
    retry_after: Option<u64>,
}

impl RpcError {
    fn new(id: &Value, code: i64, message: impl Into<String>) -> Self {
        RpcError {
            status: StatusCode::OK,
            id: Box::new(id.clone()),
            code,
            message: message.into(),
            reason: None,
            retry_after: None,
        }
    }

    /// An A2A error (`-32001` … `-32009`) with its `ErrorInfo`.
    fn a2a(id: &Value, code: i64, reason: &'static str, message: impl Into<String>) -> Self {
        RpcError {
            reason: Some(reason),
            ..RpcError::new(id, code, message)
        }
    }

    fn unauthenticated(id: &Value) -> Self {
        RpcError {
            status: StatusCode::UNAUTHORIZED,
            ..RpcError::new(id, -31401, "authentication required")
        }
    }

    fn internal(id: &Value, e: impl std::fmt::Display) -> Self {
        tracing::error!(error = %e, "A2A request failed");
        RpcError::new(id, -32603, "internal error")
    }
}

impl IntoResponse for RpcError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(reason) = self.reason {
            error["data"] = json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
                "metadata": {},
            }]);
        }
        let body = json!({"jsonrpc": "2.0", "id": self.id, "error": error});
        let mut response = (self.status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(
            "a2a-extensions",
            HeaderValue::from_static(A2A_EXTENSION_URI),
        );
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                "www-authenticate",
                HeaderValue::from_static("Bearer realm=\"anex\""),
            );
        }
        if let Some(secs) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                headers.insert("retry-after", v);
            }
        }
        response
    }
}

fn success(id: &Value, result: Value) -> Response {
    let mut response =
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response();
    response.headers_mut().insert(
        "a2a-extensions",
        HeaderValue::from_static(A2A_EXTENSION_URI),
    );
    response
}

fn rate_limited(id: &Value, message: String) -> RpcError {
    RpcError {
        status: StatusCode::TOO_MANY_REQUESTS,
        retry_after: Some(60),
        ..RpcError::new(id, -31429, message)
    }
}

/// `POST /a2a/{org}`.
async fn rpc_org(
    State(host): State<Host>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(listening): Extension<Listening>,
    Path(org): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    rpc(host, peer, listening, Some(org), headers, body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// `POST /a2a`: the organization the credential was issued for.
async fn rpc_host(
    State(host): State<Host>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(listening): Extension<Listening>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    rpc(host, peer, listening, None, headers, body)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

fn extension_activated(headers: &HeaderMap) -> bool {
    ["a2a-extensions", "x-a2a-extensions"].iter().any(|name| {
        headers
            .get_all(*name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|uri| uri.trim() == A2A_EXTENSION_URI)
    })
}

async fn rpc(
    host: Host,
    peer: SocketAddr,
    listening: Listening,
    org_in_path: Option<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, RpcError> {
    let null = Value::Null;
    let ip = super::support::client_ip(&host, peer, &headers).to_string();
    if let Err(e) = host.limiter().check(Scope::Ip, &ip).await {
        return Err(rate_limited(&null, e.to_string()));
    }
    let bytes = crate::body::read_limited(&headers, body, MAX_BODY_BYTES)
        .await
        .map_err(|_| RpcError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..RpcError::new(&null, -32600, "request body too large")
        })?;
    let request = anex::json::read_strict(&bytes, MAX_BODY_BYTES, MAX_DEPTH)
        .map_err(|e| RpcError::new(&null, -32700, format!("parse error: {e}")))?;
    let Some(object) = request.as_object() else {
        return Err(RpcError::new(
            &null,
            -32600,
            "invalid request: a JSON-RPC request object is expected (batches are not served)",
        ));
    };
    let id =
        match object.get("id") {
            Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
            _ => return Err(RpcError::new(
                &null,
                -32600,
                "invalid request: id must be a string or a number (notifications are not served)",
            )),
        };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(RpcError::new(
            &id,
            -32600,
            "invalid request: jsonrpc must be \"2.0\"",
        ));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Err(RpcError::new(
            &id,
            -32600,
            "invalid request: method must be a string",
        ));
    };
    let params = object.get("params").cloned().unwrap_or(json!({}));
    if !params.is_object() {
        return Err(RpcError::new(
            &id,
            -32602,
            "invalid params: params must be an object",
        ));
    }
    // Who is calling: one answer for every failure.
    let Some(token) = bearer(&headers) else {
        return Err(RpcError::unauthenticated(&id));
    };
    let (cp, org) = match service::authenticate(&host, token).await {
        Ok(Some(found)) => found,
        Ok(None) => return Err(RpcError::unauthenticated(&id)),
        Err(e) => return Err(RpcError::internal(&id, e)),
    };
    if org_in_path.as_ref().is_some_and(|h| *h != org.handle) {
        return Err(RpcError::unauthenticated(&id));
    }
    if let Err(e) = host.limiter().check(Scope::Agent, &cp.id).await {
        return Err(rate_limited(&id, e.to_string()));
    }
    let dialect = match method {
        "SendMessage" | "GetTask" | "CancelTask" => Dialect::V1,
        "message/send" | "tasks/get" | "tasks/cancel" => Dialect::V03,
        "SendStreamingMessage" | "SubscribeToTask" | "message/stream" | "tasks/resubscribe" => {
            return Err(RpcError::a2a(
                &id,
                -32004,
                "UNSUPPORTED_OPERATION",
                "streaming is not supported: the card declares streaming false",
            ))
        }
        m if m.contains("PushNotification") || m.starts_with("tasks/pushNotificationConfig") => {
            return Err(RpcError::a2a(
                &id,
                -32003,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                "push notifications are not supported: the card declares pushNotifications false",
            ))
        }
        other => {
            return Err(RpcError::new(
                &id,
                -32601,
                format!(
                    "method not found: {:?}",
                    other.chars().take(64).collect::<String>()
                ),
            ))
        }
    };
    if !extension_activated(&headers) {
        return Err(RpcError::a2a(
            &id,
            -32008,
            "EXTENSION_SUPPORT_REQUIRED",
            format!("this agent requires the extension {A2A_EXTENSION_URI}: list it in the A2A-Extensions header"),
        ));
    }
    if let Some(version) = headers.get("a2a-version") {
        if version.to_str().ok().map(str::trim) != Some(dialect.version()) {
            return Err(RpcError::a2a(
                &id,
                -32009,
                "VERSION_NOT_SUPPORTED",
                format!(
                    "{method} is A2A {}, but the A2A-Version header says otherwise",
                    dialect.version()
                ),
            ));
        }
    }
    let me = card::agent_identity(&host, listening, &org.handle).map_err(|e| RpcError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        ..RpcError::new(&id, -32603, e)
    })?;
    let call = Call {
        host: &host,
        cp: &cp,
        org: &org,
        me: &me,
        id: &id,
        dialect,
    };
    match method {
        "SendMessage" | "message/send" => call.send(&params).await,
        "GetTask" | "tasks/get" => call.get(&params).await,
        _ => call.cancel(&params).await,
    }
}

struct Call<'a> {
    host: &'a Host,
    cp: &'a AnexCounterpartyRow,
    org: &'a Org,
    me: &'a anex::AgentId,
    id: &'a Value,
    dialect: Dialect,
}

impl Call<'_> {
    fn failure(&self, f: Failure) -> RpcError {
        match f {
            Failure::Refused(Refusal::TaskNotFound) => {
                RpcError::a2a(self.id, -32001, "TASK_NOT_FOUND", "task not found")
            }
            Failure::Refused(Refusal::InvalidParams(m)) => {
                RpcError::new(self.id, -32602, format!("invalid params: {m}"))
            }
            Failure::NotCancelable(m) => RpcError::a2a(self.id, -32002, "TASK_NOT_CANCELABLE", m),
            Failure::Internal(e) => RpcError::internal(self.id, e),
        }
    }

    fn invalid(&self, m: impl std::fmt::Display) -> RpcError {
        RpcError::new(self.id, -32602, format!("invalid params: {m}"))
    }

    fn task_result(
        &self,
        row_context: &str,
        doc: &crate::domain::anex::Doc,
        task_id: &str,
        history: Option<usize>,
    ) -> Result<Value, RpcError> {
        let task = doc
            .tasks
            .iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| RpcError::internal(self.id, "a task vanished"))?;
        Ok(wire::task(
            self.dialect,
            row_context,
            doc,
            task,
            self.me.as_str(),
            history,
        ))
    }

    async fn send(&self, params: &Value) -> Result<Response, RpcError> {
        let incoming = wire::read_message(self.dialect, params).map_err(|m| self.invalid(m))?;
        let now = self.host.clock().now();
        let message = match anex::parse_value(&incoming.data) {
            Ok(m) => m,
            Err(e) => {
                let (policy, data) = service::files(self.host, &self.org.handle)
                    .await
                    .map_err(|e| RpcError::internal(self.id, e))?;
                let ctx = crate::domain::anex::Context {
                    counterparty: self.cp,
                    me: self.me,
                    org_name: &self.org.name,
                    policy: policy.as_ref(),
                    data: data.as_ref(),
                    org: self.org,
                    now,
                };
                let Some(answer) = crate::domain::anex::unreadable(&ctx, &e) else {
                    return Err(self.invalid("an unreadable NOT-UNDERSTOOD is not answered"));
                };
                return Ok(self.bare(
                    &answer,
                    incoming.context_id.as_deref(),
                    incoming.task_id.as_deref(),
                ));
            }
        };
        let answer = service::send(
            self.host,
            self.cp,
            self.org,
            self.me,
            incoming.context_id.as_deref(),
            incoming.task_id.as_deref(),
            &message,
            &incoming.message_id,
            now,
        )
        .await
        .map_err(|f| self.failure(f))?;
        match answer {
            Answer::Message {
                message,
                context_id,
                task_id,
            } => Ok(self.bare(&message, context_id.as_deref(), task_id.as_deref())),
            Answer::Task { row, doc, task_id } => {
                let task = self.task_result(&row.context_id, &doc, &task_id, None)?;
                let result = match self.dialect {
                    Dialect::V1 => json!({"task": task}),
                    Dialect::V03 => task,
                };
                Ok(success(self.id, result))
            }
        }
    }

    fn bare(&self, message: &anex::Message, context: Option<&str>, task: Option<&str>) -> Response {
        let m = wire::message(
            self.dialect,
            &message.to_json(),
            message.message_id().as_str(),
            true,
            context,
            task,
        );
        let result = match self.dialect {
            Dialect::V1 => json!({"message": m}),
            Dialect::V03 => m,
        };
        success(self.id, result)
    }

    fn task_id<'p>(&self, params: &'p Value) -> Result<&'p str, RpcError> {
        params
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| self.invalid("params.id (the task id) is required and must be a string"))
    }

    async fn get(&self, params: &Value) -> Result<Response, RpcError> {
        let task_id = self.task_id(params)?;
        let history = match params.get("historyLength") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                    .ok_or_else(|| {
                        self.invalid("params.historyLength must be a non-negative integer")
                    })? as usize,
            ),
        };
        let (row, doc) = service::task(self.host, self.cp, task_id)
            .await
            .map_err(|f| self.failure(f))?;
        let task = self.task_result(&row.context_id, &doc, task_id, history)?;
        Ok(success(self.id, task))
    }

    async fn cancel(&self, params: &Value) -> Result<Response, RpcError> {
        let task_id = self.task_id(params)?;
        let now = self.host.clock().now();
        let (row, doc) = service::cancel(self.host, self.cp, task_id, now)
            .await
            .map_err(|f| self.failure(f))?;
        let task = self.task_result(&row.context_id, &doc, task_id, None)?;
        Ok(success(self.id, task))
    }
}
