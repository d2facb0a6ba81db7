//! The metrics port: a small HTTP server answering `GET /metrics` with the
//! process's metrics ([`super::Sources::render`]); any other path is a 404.
//!
//! Owns: binding the port, serving scrapes on the process's tokio runtime (the
//! render itself runs on the blocking pool: it walks every tablet) and stopping.
//! Must not: serve anything that changes the process.

use std::net::SocketAddr;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

use super::Sources;

/// The content type of the OpenMetrics text format Prometheus scrapes.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A running metrics server; stopped by [`MetricsServer::stop`] or when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MetricsServer {
    /// Serves `sources` on `listener` (call from within the tokio runtime).
    pub fn start(listener: TcpListener, sources: Sources) -> std::io::Result<MetricsServer> {
        let addr = listener.local_addr()?;
        let app = Router::new().route(
            "/metrics",
            get(move || {
                let sources = sources.clone();
                async move { scrape(sources).await }
            }),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = served.await {
                tracing::warn!(error = %e, "the metrics server stopped");
            }
        });
        tracing::info!(%addr, "metrics listening (GET /metrics)");
        Ok(MetricsServer {
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting scrapes and waits for the server to end.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn scrape(sources: Sources) -> Response {
    match tokio::task::spawn_blocking(move || sources.render()).await {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "rendering the metrics failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "rendering the metrics failed\n",
            )
                .into_response()
        }
        Err(e) => {
            tracing::warn!(error = %e, "the metrics task failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the metrics task failed\n",
            )
                .into_response()
        }
    }
}
