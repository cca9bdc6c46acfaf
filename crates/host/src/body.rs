//! Reading a request body under the size limit and the time limit,
//! answering 413 or 408 in the ANP shape (axum's own rejection would not
//! be), and parsing JSON bodies.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use hyper::body::{Body as HttpBody, Frame, SizeHint};

use crate::domain::DomainError;
use crate::error::ApiError;

/// The whole body, or [`ApiError::TooLarge`] when it exceeds `max` bytes
/// (checked against `content-length` first, then while reading), or a 408
/// refusal when the client did not send it within the connection's body
/// deadline ([`Deadline`]).
pub async fn read_limited(headers: &HeaderMap, body: Body, max: usize) -> Result<Bytes, ApiError> {
    if let Some(len) = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > max as u64 {
            return Err(ApiError::TooLarge(max));
        }
    }
    axum::body::to_bytes(body, max)
        .await
        .map_err(|e| match deadline_in(&e) {
            Some(late) => ApiError::refused(
                408,
                anp::api::codes::INVALID_REQUEST,
                format!("{late}; nothing was stored."),
            ),
            None => ApiError::TooLarge(max),
        })
}

/// The [`BodyTooSlow`] somewhere in an error's chain of causes, if any.
fn deadline_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a BodyTooSlow> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(late) = e.downcast_ref::<BodyTooSlow>() {
            return Some(late);
        }
        cause = e.source();
    }
    None
}

/// Parses a JSON body into `T`, naming what was wrong when it does not fit.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    what: &str,
) -> Result<T, DomainError> {
    serde_json::from_slice(bytes)
        .map_err(|e| DomainError::Invalid(format!("The {what} body is not valid: {e}.")))
}

/// A request body that had not all arrived when its deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("The request body did not arrive within the {} s this host allows", .0.as_secs_f64())]
pub struct BodyTooSlow(Duration);

/// A request body with a deadline: once it passes, reading the rest fails
/// with [`BodyTooSlow`], so a client that stalls halfway through its body
/// cannot hold a handler (and its connection) open. Data that has already
/// arrived is still read first.
pub struct Deadline<B> {
    inner: B,
    limit: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl<B> Deadline<B> {
    /// `inner`, which must have arrived completely within `limit` from now.
    pub fn new(inner: B, limit: Duration) -> Deadline<B> {
        Deadline {
            inner,
            limit,
            timer: Box::pin(tokio::time::sleep(limit)),
        }
    }
}

impl<B> HttpBody for Deadline<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if this.timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow(this.limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
