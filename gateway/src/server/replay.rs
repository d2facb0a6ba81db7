//! A socket wrapper that first hands back the bytes consumed while sniffing the mode,
//! and notes when the client last sent anything.
//!
//! Owns [`ReplayStream`] and [`Activity`]. It adds no buffering or protocol logic.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// When a connection last received bytes, readable from another task.
#[derive(Debug)]
pub(crate) struct Activity {
    origin: Instant,
    last_read_ms: AtomicU64,
}

impl Activity {
    pub(crate) fn new() -> Self {
        Activity {
            origin: Instant::now(),
            last_read_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_read_ms.store(now, Ordering::Relaxed);
    }

    /// Time since the last received byte (or since the connection began).
    pub(crate) fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_read_ms.load(Ordering::Relaxed));
        self.origin.elapsed().saturating_sub(last)
    }
}

/// A TCP stream that yields `prefix` before reading the socket.
pub(crate) struct ReplayStream {
    prefix: Bytes,
    inner: TcpStream,
    activity: std::sync::Arc<Activity>,
}

impl ReplayStream {
    pub(crate) fn new(prefix: Bytes, inner: TcpStream, activity: std::sync::Arc<Activity>) -> Self {
        ReplayStream {
            prefix,
            inner,
            activity,
        }
    }
}

impl AsyncRead for ReplayStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.prefix.has_remaining() {
            let n = this.prefix.len().min(buf.remaining());
            if let Some(chunk) = this.prefix.get(..n) {
                buf.put_slice(chunk);
            }
            this.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if buf.filled().len() > before {
                this.activity.touch();
            }
        }
        polled
    }
}

impl AsyncWrite for ReplayStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn prefix_is_replayed_before_socket_bytes() -> io::Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let client = tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await?;
            stream.write_all(b" world").await?;
            io::Result::Ok(())
        });
        let (server, _) = listener.accept().await?;
        let activity = Arc::new(Activity::new());
        let mut replay = ReplayStream::new(Bytes::from_static(b"hello"), server, activity);
        let mut got = Vec::new();
        replay.read_to_end(&mut got).await?;
        client.await.map_err(io::Error::other)??;
        assert_eq!(got, b"hello world");
        Ok(())
    }

    #[test]
    fn activity_reports_time_since_last_read() {
        let activity = Activity::new();
        std::thread::sleep(Duration::from_millis(20));
        assert!(activity.idle_for() >= Duration::from_millis(20));
        activity.touch();
        assert!(activity.idle_for() < Duration::from_millis(20));
    }
}
