//! HBase's HTTP mode: Thrift messages carried in HTTP/1.1 POST bodies.
//!
//! Owns serving one sniffed HTTP connection with hyper, over TCP or inside a TLS
//! session (HTTPS): any path, one request message per
//! POST body, the reply as the response body (`application/x-thrift`), keep-alive, the
//! body size limit, the idle timeout and graceful shutdown. The body's protocol is taken
//! from its first byte (compact `0x82`, else binary). It does not accept connections.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch};

use crate::server::ack::{FailureReply, Handoff, ReplyTo};
use crate::server::answer::{run_deferring, Route};
use crate::server::call::{protocol_error_reply, CallError, CallReply};
use crate::server::conn::{stopped, ConnError, ConnShared, Peer};
use crate::server::detect::{Transport, WireMode};
use crate::server::frame::{MessageScanner, Scan};
use crate::server::replay::{Activity, ReplayStream};
use crate::server::wire::WireProtocol;

/// Content type of Thrift request and response bodies.
const THRIFT_CONTENT_TYPE: &str = "application/x-thrift";

/// Per-connection state the request handler needs.
struct HttpContext {
    shared: Arc<ConnShared>,
    peer: Peer,
    in_flight: AtomicUsize,
}

/// Counts a request as in flight while alive.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves HTTP requests on `stream` until the client leaves, the connection idles out, or
/// the server shuts down. `sniffed` are the bytes already read while detecting the mode.
pub(crate) async fn serve_http(
    shared: &Arc<ConnShared>,
    stream: TcpStream,
    sniffed: Bytes,
    peer: Peer,
    shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    let activity = Arc::new(Activity::new());
    let stream = ReplayStream::new(sniffed, stream, Arc::clone(&activity));
    serve_http_on(shared, stream, &activity, peer, shutdown).await
}

/// [`serve_http`] on any byte stream (a TLS session's, for HTTPS); `activity` is
/// touched whenever the client sends bytes.
pub(crate) async fn serve_http_on<S>(
    shared: &Arc<ConnShared>,
    stream: S,
    activity: &Activity,
    peer: Peer,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(stream);
    let context = Arc::new(HttpContext {
        shared: Arc::clone(shared),
        peer,
        in_flight: AtomicUsize::new(0),
    });
    let handler_context = Arc::clone(&context);
    let service = service_fn(move |request| {
        let context = Arc::clone(&handler_context);
        async move { Ok::<_, Infallible>(handle(&context, request).await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .keep_alive(true)
        .header_read_timeout(None::<Duration>);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);

    let idle_timeout = shared.opts.idle_timeout;
    let mut closing = false;
    loop {
        let idle_wait = idle_timeout.map(|limit| limit.saturating_sub(activity.idle_for()));
        tokio::select! {
            finished = connection.as_mut() => return finished.map_err(ConnError::from),
            () = stopped(&mut shutdown), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            () = sleep_or_forever(idle_wait), if !closing => {
                let idle = context.in_flight.load(Ordering::SeqCst) == 0
                    && idle_timeout.is_some_and(|limit| activity.idle_for() >= limit);
                if idle {
                    tracing::debug!(peer = %peer.addr, conn = %peer.id, "closing idle HTTP connection");
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

async fn sleep_or_forever(wait: Option<Duration>) {
    match wait {
        // Re-check at least every few milliseconds once the deadline has passed.
        Some(wait) => tokio::time::sleep(wait.max(Duration::from_millis(5))).await,
        None => std::future::pending().await,
    }
}

/// Answers one HTTP request.
async fn handle(context: &HttpContext, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let _in_flight = InFlight::enter(&context.in_flight);
    let (addr, id) = (context.peer.addr, context.peer.id);
    let limit = context.shared.opts.max_frame_size;
    if request.method() != Method::POST {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only POST is served");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if let Some(size) = declared.filter(|size| *size > limit as u64) {
        return too_large(context, size);
    }
    let body = match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.downcast_ref::<LengthLimitError>().is_some() => {
            return too_large(context, (limit as u64).saturating_add(1));
        }
        Err(err) => {
            tracing::debug!(peer = %addr, conn = %id, "reading HTTP body failed: {err}");
            return plain(StatusCode::BAD_REQUEST, "unreadable request body");
        }
    };
    let protocol = match body.first() {
        Some(0x82) => WireProtocol::Compact,
        _ => WireProtocol::Binary,
    };
    let mut scanner = MessageScanner::new(protocol, limit);
    let failure = match scanner.scan(&body) {
        Scan::Complete(end) => {
            return call(context, protocol, body.slice(..end)).await;
        }
        Scan::NeedMore if body.is_empty() => {
            return plain(StatusCode::BAD_REQUEST, "empty request body");
        }
        Scan::NeedMore => crate::server::wire::ScanError::Truncated(body.len()),
        Scan::Invalid(error) => error,
    };
    context.shared.stats.malformed_message();
    tracing::info!(peer = %addr, conn = %id, "malformed Thrift message in HTTP body: {failure}");
    match scanner
        .header()
        .and_then(|header| protocol_error_reply(protocol, header, &failure.to_string()))
    {
        Some(reply) => thrift_response(reply),
        None => plain(StatusCode::BAD_REQUEST, "body is not a Thrift message"),
    }
}

async fn call(
    context: &HttpContext,
    protocol: WireProtocol,
    message: Bytes,
) -> Response<Full<Bytes>> {
    let id = context.peer.id;
    let shared = &context.shared;
    // Point reads and single-row writes run right here, as on an event loop, where
    // the server's calls are local (it has loops) and writes would not wait for
    // memtable room now; anything else, or with every call slot taken, on the
    // blocking pool.
    let route = Route::of(&shared.opts, protocol, &message);
    let here = route.on_loop
        && shared.opts.serves_on_loops()
        && (route.deferrable.is_none() || !shared.opts.writes_stall());
    let message = match here {
        true => match run_here(context, protocol, message, route) {
            Ok(Here::Answered(outcome)) => return respond(context, outcome),
            Ok(Here::HandedOver(synced)) => {
                return match synced.await {
                    Ok(Ok(reply)) => thrift_response(reply),
                    Ok(Err(e)) => failed(context, &e),
                    Err(_) => failed(context, &"the acknowledger dropped the reply"),
                }
            }
            Err(message) => message,
        },
        false => message,
    };
    let outcome = shared.dispatcher.call(id, protocol, message).await;
    respond(context, outcome)
}

/// How a call run on the runtime worker was answered.
enum Here {
    /// Its outcome, to send now.
    Answered(Result<CallReply, CallError>),
    /// Its reply went to the acknowledger with the synced writes it deferred, and
    /// comes back once they are synced and visible.
    HandedOver(oneshot::Receiver<std::io::Result<Vec<u8>>>),
}

/// Runs a quick call on this runtime worker, a deferrable one in a deferral scope
/// (its synced writes then wait for the commit log on the acknowledger, not here);
/// gives the message back when every call slot is taken.
fn run_here(
    context: &HttpContext,
    protocol: WireProtocol,
    message: Bytes,
    route: Route,
) -> Result<Here, Bytes> {
    let shared = &context.shared;
    let (outcome, deferred) = run_deferring(
        route,
        || {
            shared
                .dispatcher
                .call_here(context.peer.id, protocol, message)
        },
        |outcome| matches!(outcome, Ok(Ok(CallReply::Message(_)))),
    );
    match (route.deferrable, outcome?) {
        (Some(call), Ok(CallReply::Message(reply))) if !deferred.is_empty() => {
            let (sender, receiver) = oneshot::channel();
            let mode = WireMode {
                transport: Transport::Http,
                protocol,
            };
            let failure = FailureReply::of(call, protocol, mode);
            let to = ReplyTo::Waiter(sender);
            shared
                .ack
                .hand_over(Handoff::new(deferred, reply, failure, to));
            Ok(Here::HandedOver(receiver))
        }
        (_, outcome) => Ok(Here::Answered(outcome)),
    }
}

/// The HTTP response carrying a call's outcome.
fn respond(context: &HttpContext, outcome: Result<CallReply, CallError>) -> Response<Full<Bytes>> {
    match outcome {
        Ok(CallReply::Message(reply)) => thrift_response(reply),
        Ok(CallReply::Nothing) => thrift_response(Vec::new()),
        Err(err) => failed(context, &err),
    }
}

/// The response to a call that produced no reply, logged.
fn failed(context: &HttpContext, why: &dyn std::fmt::Display) -> Response<Full<Bytes>> {
    let (addr, id) = (context.peer.addr, context.peer.id);
    tracing::info!(peer = %addr, conn = %id, "HTTP call failed: {why}");
    plain(StatusCode::INTERNAL_SERVER_ERROR, "call failed")
}

fn too_large(context: &HttpContext, size: u64) -> Response<Full<Bytes>> {
    let limit = context.shared.opts.max_frame_size;
    context.shared.stats.oversized_message();
    tracing::warn!(
        peer = %context.peer.addr, conn = %context.peer.id, size, limit,
        "closing connection: HTTP body larger than max_frame_size"
    );
    let mut response = plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

fn thrift_response(body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(THRIFT_CONTENT_TYPE));
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
