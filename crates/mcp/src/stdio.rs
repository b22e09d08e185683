//! Standard input that tells when the client has gone.
//!
//! rmcp cancels a running call's token only after draining for 5 s once its input closes;
//! a question whose asker has gone should be withdrawn at once, so the end of input is
//! signalled here, where it is first seen.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// Reads `inner`, cancelling `closed` when it reports end of input (or fails).
pub struct EofSignal<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R> EofSignal<R> {
    pub fn new(inner: R, closed: CancellationToken) -> EofSignal<R> {
        EofSignal { inner, closed }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            // A read of nothing into room for something is the end of input.
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                self.closed.cancel()
            }
            // A broken pipe ends the session just the same.
            Poll::Ready(Err(_)) => self.closed.cancel(),
            _ => {}
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn the_end_of_input_cancels_the_token() {
        let closed = CancellationToken::new();
        let mut reader = EofSignal::new(&b"{}\n"[..], closed.clone());
        let mut text = String::new();
        let mut chunk = [0u8; 2];
        let n = reader.read(&mut chunk).await.unwrap();
        assert_eq!(n, 2);
        assert!(!closed.is_cancelled());
        reader.read_to_string(&mut text).await.unwrap();
        assert!(closed.is_cancelled());
    }
}
