//! The accept loop: HTTP/1 connections served with bounds a slow or
//! hostile client cannot stretch, whether or not a proxy stands in front
//! (crates/host/README.md, "Slow clients").
//!
//! - Headers must arrive within `header_read_timeout` (hyper's timer, which
//!   also runs while a kept-alive connection waits for its next request):
//!   a connection that dribbles or withholds them is closed.
//! - A body must arrive within `body_read_timeout` of its headers
//!   ([`crate::body::Deadline`]): a stalled one is refused with 408.
//! - At most `max_connections` are open at once (fewer when the process's
//!   open-file limit is lower, so it never runs out of descriptors). A
//!   connection that arrives at the cap takes the place of the one that
//!   has waited longest for a request (mid-headers or idle): slow clients
//!   cannot crowd out a client that sends its request at once. When none
//!   waits for a request, the one whose request has been held longest (a
//!   console's waiting summary, [`Room`]) is asked to make room: it answers
//!   at once, asking its console to come back later, and closes. Only when
//!   every connection is busy with a request that cannot be cut short does
//!   the loop wait for one to finish (the kernel queues the rest).
//! - An accept error (`EMFILE` when something else used the descriptors)
//!   is logged and retried after a pause, never spun on or fatal.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};

use crate::body::Deadline;
use crate::config::Connections;

/// How long the loop waits after an accept error before trying again.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves `router` on `listener` until `shutdown` completes, then lets the
/// open connections finish their requests and returns.
pub async fn run(
    listener: TcpListener,
    router: Router,
    bounds: Connections,
    shutdown: impl Future<Output = ()>,
) {
    let cap = effective_cap(bounds.max_connections, raise_open_file_limit());
    let slots = Arc::new(Semaphore::new(cap));
    let open = Arc::new(Open::default());
    // `stop` tells connections to finish; each holds a `draining` receiver,
    // and `stop.closed()` resolves once the last of them is dropped.
    let (stop, draining) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if gone_before_accepted(&e) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed; trying again shortly");
                    tokio::select! {
                        () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                        () = &mut shutdown => break,
                    }
                }
            },
            () = &mut shutdown => break,
        };
        let slot = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                open.make_room();
                tokio::select! {
                    slot = Arc::clone(&slots).acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break,
                    },
                    () = &mut shutdown => break,
                }
            }
        };
        let state = open.add();
        tokio::spawn(serve_connection(
            stream,
            peer,
            router.clone(),
            bounds,
            Held {
                _slot: slot,
                open: Arc::clone(&open),
                state,
                draining: draining.clone(),
            },
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    drop(draining);
    stop.closed().await;
}

/// The cap in force: the configured one, or three quarters of the open-file
/// limit when that is lower (the rest is for the database, logs and the
/// connection being accepted).
fn effective_cap(configured: usize, open_file_limit: Option<u64>) -> usize {
    let cap = match open_file_limit {
        Some(files) => {
            let room = usize::try_from(files / 4 * 3).unwrap_or(usize::MAX);
            if room < configured {
                tracing::info!(
                    configured,
                    open_file_limit = files,
                    "holding at most {room} connections: the open-file limit leaves no room for more"
                );
            }
            configured.min(room)
        }
        None => configured,
    };
    cap.max(1)
}

/// Raises this process's soft limit on open files to the hard limit the
/// system allows, and answers the limit in force: each connection held (a
/// waiting console's among them) takes one, and a soft limit of 1,024
/// (systemd's default) would cap the connections below the configured
/// number for no reason.
fn raise_open_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => Some(limit),
        Err(e) => {
            tracing::warn!(error = %e, "could not raise the open-file limit; the connection cap follows the current one");
            rlimit::getrlimit(rlimit::Resource::NOFILE)
                .ok()
                .map(|(soft, _)| soft)
        }
    }
}

/// The peer left before the connection was accepted: nothing to wait for.
fn gone_before_accepted(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
    )
}

/// The open connections, so that one arriving at the cap can take the place
/// of the one that has waited longest for a request.
#[derive(Default)]
struct Open {
    /// Increases with each connection opened and each request answered.
    clock: AtomicU64,
    next_id: AtomicU64,
    all: Mutex<HashMap<u64, Arc<ConnState>>>,
}

/// One connection's state, as the loop sees it.
struct ConnState {
    id: u64,
    /// The `clock` value when it began waiting for a request; 0 while it
    /// serves one.
    waiting_since: AtomicU64,
    /// The `clock` value when its request began holding the connection
    /// until something changes ([`Room::hold`]); 0 otherwise.
    held_since: AtomicU64,
    /// Told to close.
    close: Notify,
    /// Its held request is told to answer now.
    make_room: Notify,
}

impl Open {
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn add(&self) -> Arc<ConnState> {
        let state = Arc::new(ConnState {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            waiting_since: AtomicU64::new(self.tick()),
            held_since: AtomicU64::new(0),
            close: Notify::new(),
            make_room: Notify::new(),
        });
        if let Ok(mut all) = self.all.lock() {
            all.insert(state.id, Arc::clone(&state));
        }
        state
    }

    fn remove(&self, id: u64) {
        if let Ok(mut all) = self.all.lock() {
            all.remove(&id);
        }
    }

    /// Frees a place for a connection arriving at the cap: closes the
    /// connection that has waited longest for a request; when none waits,
    /// asks the request held longest ([`Room::hold`]) to answer now, and its
    /// connection to close once it has.
    fn make_room(&self) {
        let Ok(all) = self.all.lock() else { return };
        let oldest = |since: fn(&ConnState) -> u64| {
            all.values()
                .filter(|c| since(c) != 0)
                .min_by_key(|c| since(c))
                .cloned()
        };
        if let Some(conn) = oldest(|c| c.waiting_since.load(Ordering::Relaxed)) {
            tracing::debug!(
                "at the connection cap: closing the connection that waited longest for a request"
            );
            conn.close.notify_one();
        } else if let Some(conn) = oldest(|c| c.held_since.load(Ordering::Relaxed)) {
            tracing::debug!(
                "at the connection cap: the request held longest answers now to make room"
            );
            conn.make_room.notify_one();
            conn.close.notify_one();
        }
    }
}

/// A request's place on its connection: what a request that holds its
/// connection until something changes (a console's waiting summary) uses
/// to say so, and to hear when a connection arriving at the cap needs the
/// place. Every request served by [`run`] carries one as an extension.
#[derive(Clone)]
pub struct Room {
    open: Arc<Open>,
    state: Arc<ConnState>,
}

impl Room {
    /// Marks the request as held until something changes, for as long as
    /// the guard lives: from then on it may be asked to make room.
    pub fn hold(&self) -> Holding {
        self.state
            .held_since
            .store(self.open.tick(), Ordering::Relaxed);
        Holding(Arc::clone(&self.state))
    }

    /// Resolves when a connection arriving at the cap needs this one's place.
    pub async fn wanted(&self) {
        self.state.make_room.notified().await;
    }
}

/// While alive, the request is held ([`Room::hold`]).
pub struct Holding(Arc<ConnState>);

impl Drop for Holding {
    fn drop(&mut self) {
        self.0.held_since.store(0, Ordering::Relaxed);
    }
}

/// What a connection holds until it closes: its slot under the cap, its
/// entry among the open connections, and its place among those shutdown
/// waits for.
struct Held {
    _slot: OwnedSemaphorePermit,
    open: Arc<Open>,
    state: Arc<ConnState>,
    draining: watch::Receiver<bool>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.open.remove(self.state.id);
    }
}

/// Marks its connection busy while a request is served, and waiting again
/// once it is answered.
struct Busy {
    open: Arc<Open>,
    state: Arc<ConnState>,
}

impl Busy {
    fn new(open: &Arc<Open>, state: &Arc<ConnState>) -> Busy {
        state.waiting_since.store(0, Ordering::Relaxed);
        Busy {
            open: Arc::clone(open),
            state: Arc::clone(state),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.state
            .waiting_since
            .store(self.open.tick(), Ordering::Relaxed);
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    bounds: Connections,
    mut held: Held,
) {
    let router = TowerToHyperService::new(router);
    let body_limit = bounds.body_read_timeout;
    let (open, state) = (Arc::clone(&held.open), Arc::clone(&held.state));
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = Busy::new(&open, &state);
        let mut request = request.map(|body| Deadline::new(body, body_limit));
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(Room {
            open: Arc::clone(&open),
            state: Arc::clone(&state),
        });
        let answer = router.call(request);
        async move {
            let response = answer.await;
            drop(busy);
            response
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_read_timeout);
    let mut conn = pin!(builder.serve_connection(TokioIo::new(stream), service));
    let mut finishing = false;
    let outcome = loop {
        tokio::select! {
            outcome = conn.as_mut() => break outcome,
            () = held.state.close.notified(), if !finishing => {
                if held.state.waiting_since.load(Ordering::Relaxed) != 0 {
                    return;
                }
                // A request arrived meanwhile: answer it, then close.
                conn.as_mut().graceful_shutdown();
                finishing = true;
            }
            _ = held.draining.wait_for(|stop| *stop), if !finishing => {
                conn.as_mut().graceful_shutdown();
                finishing = true;
            }
        }
    };
    if let Err(e) = outcome {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}
