//! The wire: LSP's `Content-Length` framing over a byte stream, with lsp-server's message
//! types and writer. lsp-server's own stdio reader is not used because it trusts the
//! client: it allocates whatever `Content-Length` says and ends the session at the first
//! body that is not JSON. This reader bounds headers and bodies (a larger body is read
//! and discarded in chunks), and turns a body that is not a JSON-RPC message into an
//! [`Incoming::Malformed`] the server answers (or logs) before reading on.

use lsp_server::{Message, RequestId};
use std::io::{BufRead, Read, Write};
use std::sync::mpsc::{Receiver, SyncSender};

/// The largest message body accepted (a program's files are at most 16 MiB each; JSON
/// escaping can double that).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// The longest header line accepted.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Messages read ahead of the server: the reader waits beyond them, so a client that
/// sends faster than the server answers holds at most this many bodies in memory.
pub const READ_AHEAD: usize = 4;

/// What the reader hands to the server.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A framed body that is not a JSON-RPC message; `id` when one could be read.
    Malformed {
        id: Option<RequestId>,
        error: String,
    },
}

/// Why reading stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// End of input.
    Eof,
    /// The framing is broken (a header that cannot be parsed): the stream cannot be
    /// resynchronised.
    Broken(String),
    /// The server stopped listening.
    Closed,
}

/// Reads framed messages until the input ends, the framing breaks or `tx` closes (`tx`
/// bounded, [`READ_AHEAD`]: the bodies waiting for the server are bounded too).
pub fn read_loop(mut input: impl BufRead, tx: SyncSender<Incoming>) -> End {
    loop {
        let size = match read_headers(&mut input) {
            Ok(Some(n)) => n,
            Ok(None) => return End::Eof,
            Err(e) => return End::Broken(e),
        };
        let item = if size > MAX_MESSAGE_BYTES {
            if let Err(e) = discard(&mut input, size) {
                return End::Broken(e);
            }
            Incoming::Malformed {
                id: None,
                error: format!(
                    "message of {size} bytes discarded: the limit is {MAX_MESSAGE_BYTES} bytes"
                ),
            }
        } else {
            let mut body = vec![0u8; size];
            if let Err(e) = input.read_exact(&mut body) {
                return if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    End::Eof
                } else {
                    End::Broken(e.to_string())
                };
            }
            decode(&body)
        };
        if tx.send(item).is_err() {
            return End::Closed;
        }
    }
}

/// One body: a message, or why it is not one (with its id when it has a usable one).
pub fn decode(body: &[u8]) -> Incoming {
    match serde_json::from_slice::<Message>(body) {
        Ok(m) => Incoming::Message(m),
        Err(e) => {
            let id = serde_json::from_slice::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
            Incoming::Malformed {
                id,
                error: format!("not a JSON-RPC message: {e}"),
            }
        }
    }
}

/// Reads the header lines; `Ok(None)` at end of input before any header.
fn read_headers(input: &mut impl BufRead) -> Result<Option<usize>, String> {
    let mut size: Option<usize> = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = input
            .by_ref()
            .take(MAX_HEADER_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err("end of input inside a header".into())
            };
        }
        first = false;
        if line.len() > MAX_HEADER_BYTES {
            return Err(format!("header line longer than {MAX_HEADER_BYTES} bytes"));
        }
        let Some(text) = line.strip_suffix(b"\r\n") else {
            return Err(format!(
                "malformed header {:?}: lines end with \\r\\n",
                String::from_utf8_lossy(&line)
            ));
        };
        if text.is_empty() {
            return size
                .map(Some)
                .ok_or_else(|| "no Content-Length header".to_string());
        }
        let text = String::from_utf8_lossy(text);
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("malformed header {text:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            size = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|e| format!("bad Content-Length {value:?}: {e}"))?,
            );
        }
    }
}

fn discard(input: &mut impl Read, size: usize) -> Result<(), String> {
    let copied = std::io::copy(&mut input.take(size as u64), &mut std::io::sink())
        .map_err(|e| e.to_string())?;
    if copied < size as u64 {
        return Err("end of input inside a message".into());
    }
    Ok(())
}

/// Writes messages until the channel closes or the output fails (the client is gone).
pub fn write_loop(mut out: impl Write, rx: Receiver<Message>) {
    for m in rx {
        if m.write(&mut out).is_err() || out.flush().is_err() {
            return;
        }
    }
}

/// The sending half the server uses (bounded: a client that stops reading slows the
/// server down rather than filling memory).
pub type Outgoing = SyncSender<Message>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn read_all(input: &[u8]) -> (Vec<Incoming>, End) {
        let (tx, rx) = sync_channel(16);
        let end = read_loop(input, tx);
        (rx.into_iter().collect(), end)
    }

    #[test]
    fn reads_messages_until_eof() {
        let input = frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
            + &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#);
        let (got, end) = read_all(input.as_bytes());
        assert_eq!(end, End::Eof);
        assert_eq!(got.len(), 2);
        assert!(
            matches!(&got[0], Incoming::Message(Message::Request(r)) if r.method == "initialize")
        );
    }

    #[test]
    fn a_bad_body_is_reported_and_reading_goes_on() {
        let input = frame("{not json")
            + &frame(r#"{"jsonrpc":"2.0","id":7,"method":5}"#)
            + &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#);
        let (got, end) = read_all(input.as_bytes());
        assert_eq!(end, End::Eof);
        assert!(matches!(&got[0], Incoming::Malformed { id: None, .. }));
        assert!(
            matches!(&got[1], Incoming::Malformed { id: Some(id), .. } if *id == RequestId::from(7))
        );
        assert!(matches!(&got[2], Incoming::Message(_)));
    }

    #[test]
    fn an_oversized_body_is_discarded_without_allocating_it() {
        let big = MAX_MESSAGE_BYTES + 10;
        let mut input = format!("Content-Length: {big}\r\n\r\n").into_bytes();
        input.resize(input.len() + big, b' ');
        input.extend_from_slice(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#).as_bytes());
        let (got, end) = read_all(&input);
        assert_eq!(end, End::Eof);
        assert!(matches!(&got[0], Incoming::Malformed { error, .. } if error.contains("limit")));
        assert!(matches!(&got[1], Incoming::Message(_)));
    }

    #[test]
    fn the_reader_waits_for_the_server_beyond_its_read_ahead() {
        let one = frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
        let input = one.repeat(READ_AHEAD + 10).into_bytes();
        let (tx, rx) = sync_channel(READ_AHEAD);
        let reader = std::thread::spawn(move || read_loop(input.as_slice(), tx));
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Nothing received yet: the reader waits with READ_AHEAD messages queued.
        assert!(!reader.is_finished(), "the reader read everything ahead");
        assert_eq!(rx.iter().count(), READ_AHEAD + 10);
        assert_eq!(reader.join().ok(), Some(End::Eof));
    }

    #[test]
    fn broken_framing_stops_reading() {
        for input in [
            "garbage\n".to_string(),
            "Content-Length: x\r\n\r\n".into(),
            "\r\n".into(),
            format!("X-Long: {}\r\n", "a".repeat(MAX_HEADER_BYTES)),
            "Content-Length: 10\r\n".into(),
        ] {
            let (_, end) = read_all(input.as_bytes());
            assert!(matches!(end, End::Broken(_)), "{input:?}: {end:?}");
        }
        // A body cut short is the end of input.
        let (got, end) = read_all(b"Content-Length: 10\r\n\r\n{}");
        assert!(got.is_empty());
        assert_eq!(end, End::Eof);
    }
}
