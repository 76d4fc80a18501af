//! The viewer's HTTP/1.1: one request per connection, parsed with
//! `httparse`, under fixed limits that are checked before anything is
//! allocated for the request — head at most [`MAX_HEAD`] bytes, URL at
//! most [`MAX_URL`], body at most [`MAX_BODY`] and only with a
//! `Content-Length`, 10 s to send it all. A request outside them gets a
//! 4xx with the reason and the connection is closed. (A general-purpose
//! server was tried first: it allocated whatever `Content-Length` a client
//! declared, so one request could abort the process.)

use serde_json::Value;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Largest request head (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;

/// Longest request target (path and query).
pub const MAX_URL: usize = 2048;

/// Largest request body (a `baker query` line; a 256-point hull is about
/// 10 KiB).
pub const MAX_BODY: usize = 64 * 1024;

/// Most headers a request may carry.
const MAX_HEADERS: usize = 32;

/// Time a client has to send its request.
const READ_LIMIT: Duration = Duration::from_secs(10);

/// A response.
pub struct Answer {
    status: u16,
    kind: &'static str,
    body: Cow<'static, [u8]>,
}

impl Answer {
    /// A response with a body of type `kind`.
    pub fn new(status: u16, kind: &'static str, body: impl Into<Cow<'static, [u8]>>) -> Answer {
        Answer {
            status,
            kind,
            body: body.into(),
        }
    }

    /// A JSON response.
    pub fn json(status: u16, v: &Value) -> Answer {
        Answer::new(status, "application/json", v.to_string().into_bytes())
    }

    /// A refusal: `{"error": reason}`.
    pub fn refuse(status: u16, reason: &str) -> Answer {
        Answer::json(status, &serde_json::json!({ "error": reason }))
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        _ => "Status",
    }
}

fn send(stream: &mut TcpStream, a: &Answer) {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        a.status,
        reason(a.status),
        a.kind,
        a.body.len()
    );
    // the client may have gone: nothing to do about it
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.write_all(&a.body))
        .and_then(|_| stream.flush());
}

/// What reading a request came to.
pub enum Incoming {
    /// Method, target and body.
    Request(String, String, Vec<u8>),
    /// Refused with this answer.
    Refused(Answer),
    /// The client went away or sent nothing.
    Gone,
}

impl Incoming {
    /// The refusal's status, if the request was refused.
    pub fn refused(&self) -> Option<u16> {
        match self {
            Incoming::Refused(a) => Some(a.status),
            _ => None,
        }
    }
}

/// Where a request is read from: a socket, or bytes (the fuzz target's).
pub trait Source: Read {
    /// Gives the next reads at most `left` to arrive.
    fn set_read_timeout(&mut self, left: Duration) -> std::io::Result<()>;
}

impl Source for TcpStream {
    fn set_read_timeout(&mut self, left: Duration) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, Some(left))
    }
}

impl Source for &[u8] {
    fn set_read_timeout(&mut self, _: Duration) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads one request from `stream` within the limits (fuzzed:
/// `fuzz/fuzz_targets/view_http.rs`).
pub fn read_request(stream: &mut impl Source) -> Incoming {
    let deadline = Instant::now() + READ_LIMIT;
    let mut buf = vec![0u8; MAX_HEAD];
    let mut len = 0;
    // the head: read until it parses, or is too long
    let (method, target, body_start, content_length) = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(left).is_err() {
            return Incoming::Refused(Answer::refuse(408, "request not sent in time"));
        }
        match stream.read(&mut buf[len..]) {
            Ok(0) if len == 0 => return Incoming::Gone,
            Ok(0) => {
                return Incoming::Refused(Answer::refuse(400, "the request ends inside its head"));
            }
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Incoming::Refused(Answer::refuse(408, "request not sent in time"));
            }
            Err(_) => return Incoming::Gone,
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(at)) => {
                let method = req.method.unwrap_or_default().to_string();
                let target = req.path.unwrap_or_default();
                if target.len() > MAX_URL {
                    return Incoming::Refused(Answer::refuse(414, "URL over 2048 bytes"));
                }
                let mut length = None;
                for h in req.headers.iter() {
                    if h.name.eq_ignore_ascii_case("transfer-encoding") {
                        return Incoming::Refused(Answer::refuse(
                            501,
                            "chunked bodies are not accepted: send a Content-Length",
                        ));
                    }
                    if h.name.eq_ignore_ascii_case("content-length") {
                        let v = std::str::from_utf8(h.value)
                            .ok()
                            .and_then(|v| v.trim().parse::<u64>().ok());
                        match (v, length) {
                            (None, _) => {
                                return Incoming::Refused(Answer::refuse(
                                    400,
                                    "Content-Length is not a number",
                                ));
                            }
                            (Some(a), Some(b)) if a != b => {
                                return Incoming::Refused(Answer::refuse(
                                    400,
                                    "two different Content-Lengths",
                                ));
                            }
                            (Some(a), _) => length = Some(a),
                        }
                    }
                }
                break (method, target.to_string(), at, length.unwrap_or(0));
            }
            Ok(httparse::Status::Partial) if len == MAX_HEAD => {
                return Incoming::Refused(Answer::refuse(431, "request head over 16 KiB"));
            }
            Ok(httparse::Status::Partial) => {
                // a request line alone can already be too long
                if !buf[..len].contains(&b'\n') && len > MAX_URL + 64 {
                    return Incoming::Refused(Answer::refuse(414, "URL over 2048 bytes"));
                }
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Incoming::Refused(Answer::refuse(431, "more than 32 headers"));
            }
            Err(e) => return Incoming::Refused(Answer::refuse(400, &format!("not HTTP/1.x: {e}"))),
        }
    };
    if content_length > MAX_BODY as u64 {
        return Incoming::Refused(Answer::refuse(413, "request body over 64 KiB"));
    }
    let want = content_length as usize;
    let mut body = buf[body_start..len].to_vec();
    if body.len() > want {
        // a second request on the same connection: not served (one per
        // connection), the rest is dropped
        body.truncate(want);
    }
    while body.len() < want {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(left).is_err() {
            return Incoming::Refused(Answer::refuse(408, "request body not sent in time"));
        }
        let mut chunk = [0u8; 8192];
        let n = (want - body.len()).min(chunk.len());
        match stream.read(&mut chunk[..n]) {
            Ok(0) => {
                return Incoming::Refused(Answer::refuse(
                    400,
                    "the body is shorter than its Content-Length",
                ));
            }
            Ok(k) => body.extend_from_slice(&chunk[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                return Incoming::Refused(Answer::refuse(408, "request body not sent in time"));
            }
        }
    }
    Incoming::Request(method, target, body)
}

/// Serves one connection: one request, one answer, closed.
fn connection(mut stream: TcpStream, route: &(dyn Fn(&str, &str, &[u8]) -> Answer + Sync)) {
    let _ = stream.set_write_timeout(Some(READ_LIMIT));
    let answer = match read_request(&mut stream) {
        Incoming::Gone => return,
        Incoming::Refused(a) => a,
        Incoming::Request(method, target, body) => route(&method, &target, &body),
    };
    send(&mut stream, &answer);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Accepts connections on `listener` forever, each served on its own
/// thread by `route`, at most `threads` at once (the next waits to be
/// accepted until one ends).
pub fn serve<F>(listener: &TcpListener, threads: usize, route: F)
where
    F: Fn(&str, &str, &[u8]) -> Answer + Sync,
{
    let busy = Arc::new((Mutex::new(0usize), Condvar::new()));
    std::thread::scope(|scope| {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            {
                let (n, freed) = &*busy;
                let mut n = n.lock().unwrap();
                while *n >= threads {
                    n = freed.wait(n).unwrap();
                }
                *n += 1;
            }
            let busy = Arc::clone(&busy);
            let route = &route;
            scope.spawn(move || {
                connection(stream, route);
                let (n, freed) = &*busy;
                *n.lock().unwrap() -= 1;
                freed.notify_one();
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Incoming {
        read_request(&mut &bytes[..])
    }

    /// Requests read from bytes, as the fuzz target feeds them: served
    /// within the limits, refused with the status that says why.
    #[test]
    fn requests_from_bytes_are_read_or_refused_by_their_limits() {
        match read(b"POST /api/query HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}") {
            Incoming::Request(m, t, b) => {
                assert_eq!(
                    (m.as_str(), t.as_str(), b.as_slice()),
                    ("POST", "/api/query", &b"{}"[..])
                );
            }
            _ => panic!("a good request"),
        }
        let big = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert_eq!(read(big.as_bytes()).refused(), Some(413));
        assert_eq!(
            read(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").refused(),
            Some(501)
        );
        assert_eq!(read(b"\x00\x01 not http\r\n\r\n").refused(), Some(400));
        assert_eq!(
            read(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n{}").refused(),
            Some(400)
        );
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_URL + 1));
        assert_eq!(read(long.as_bytes()).refused(), Some(414));
        assert!(matches!(read(b""), Incoming::Gone));
    }
}
