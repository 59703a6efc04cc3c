//! Whole HTTP/1.1 messages read from and written to a socket, for the S3 fault proxy and the
//! harness's own S3 requests.
//!
//! Heads are parsed by `httparse`; bodies are read whole (Content-Length, chunked, or up to
//! EOF) and always re-sent with a Content-Length. That is all a test proxy needs: it buffers
//! each request and response, so it can answer, delay, drop or cut either at a message boundary.

use std::io::{self, BufRead, Write};

const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 128;

/// Headers that describe one hop, not the message: never forwarded as they came.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "content-length",
];

/// A request as the client sent it, body de-chunked.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

/// A response, body de-chunked.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

/// Case-insensitive header lookup.
pub(crate) fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
}

fn has_token(headers: &[(String, Vec<u8>)], name: &str, token: &str) -> bool {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .flat_map(|(_, v)| v.split(|&b| b == b','))
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

impl Request {
    /// True if the client asked to close the connection after this exchange.
    pub(crate) fn wants_close(&self) -> bool {
        has_token(&self.headers, "connection", "close")
    }

    /// The `Range` header, if any.
    pub(crate) fn range(&self) -> Option<String> {
        header(&self.headers, "range").map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Writes the request for a fresh upstream connection that closes after one exchange.
    pub(crate) fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        push_headers(&mut head, &self.headers);
        head.extend_from_slice(
            format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                self.body.len()
            )
            .as_bytes(),
        );
        out.write_all(&head)?;
        out.write_all(&self.body)?;
        out.flush()
    }
}

impl Response {
    /// A response with a body and a content type.
    pub(crate) fn new(status: u16, reason: &str, content_type: &str, body: Vec<u8>) -> Self {
        Response {
            status,
            reason: reason.into(),
            headers: vec![("Content-Type".into(), content_type.as_bytes().to_vec())],
            body,
        }
    }

    /// Writes status line and headers, announcing the full body length (for a HEAD response,
    /// the upstream's Content-Length).
    pub(crate) fn write_head(&self, out: &mut impl Write, head_request: bool) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, self.reason).into_bytes();
        push_headers(&mut head, &self.headers);
        if head_request {
            if let Some(len) = header(&self.headers, "content-length") {
                head.extend_from_slice(b"Content-Length: ");
                head.extend_from_slice(len);
                head.extend_from_slice(b"\r\n");
            }
        } else if !no_body_status(self.status) {
            head.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes());
        }
        head.extend_from_slice(b"\r\n");
        out.write_all(&head)
    }

    /// Writes the whole response.
    pub(crate) fn write_to(&self, out: &mut impl Write, head_request: bool) -> io::Result<()> {
        self.write_head(out, head_request)?;
        if !head_request {
            out.write_all(&self.body)?;
        }
        out.flush()
    }
}

fn push_headers(head: &mut Vec<u8>, headers: &[(String, Vec<u8>)]) {
    for (name, value) in headers {
        if HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue;
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
}

fn no_body_status(status: u16) -> bool {
    (100..200).contains(&status) || status == 204 || status == 304
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads up to and including the blank line ending a head; `None` on EOF before any byte.
fn read_head(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    loop {
        let n = input.read_until(b'\n', &mut head)?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        if head == b"\r\n" || head == b"\n" {
            head.clear(); // tolerated empty lines between messages
            continue;
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            return Ok(Some(head));
        }
        if head.len() > MAX_HEAD {
            return Err(invalid("HTTP head longer than 64 KiB"));
        }
    }
}

fn owned_headers(headers: &[httparse::Header<'_>]) -> Vec<(String, Vec<u8>)> {
    headers
        .iter()
        .map(|h| (h.name.to_string(), h.value.to_vec()))
        .collect()
}

/// Reads one request; `None` if the client closed the connection between requests.
/// `on_expect_continue` is called before reading the body of a request that asked for
/// `100 Continue` (the proxy answers it itself; the header is not forwarded).
pub(crate) fn read_request(
    input: &mut impl BufRead,
    on_expect_continue: impl FnOnce() -> io::Result<()>,
) -> io::Result<Option<Request>> {
    let Some(raw) = read_head(input)? else {
        return Ok(None);
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(&raw) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(invalid("incomplete HTTP request head")),
        Err(e) => return Err(invalid(format!("bad HTTP request head: {e}"))),
    }
    let method = parsed.method.unwrap_or_default().to_string();
    let target = parsed.path.unwrap_or_default().to_string();
    let headers = owned_headers(parsed.headers);
    if has_token(&headers, "expect", "100-continue") {
        on_expect_continue()?;
    }
    let body = read_body(input, &headers, true)?;
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
    }))
}

/// Reads one response to a request with method `method`.
pub(crate) fn read_response(input: &mut impl BufRead, method: &str) -> io::Result<Response> {
    loop {
        let raw = read_head(input)?.ok_or(io::ErrorKind::UnexpectedEof)?;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut headers);
        match parsed.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err(invalid("incomplete HTTP response head")),
            Err(e) => return Err(invalid(format!("bad HTTP response head: {e}"))),
        }
        let status = parsed.code.unwrap_or_default();
        if status == 100 {
            continue; // an interim answer; the real one follows
        }
        let reason = parsed.reason.unwrap_or_default().to_string();
        let headers = owned_headers(parsed.headers);
        let body = if method.eq_ignore_ascii_case("HEAD") || no_body_status(status) {
            Vec::new()
        } else {
            read_body(input, &headers, false)?
        };
        return Ok(Response {
            status,
            reason,
            headers,
            body,
        });
    }
}

fn read_body(
    input: &mut impl BufRead,
    headers: &[(String, Vec<u8>)],
    is_request: bool,
) -> io::Result<Vec<u8>> {
    if has_token(headers, "transfer-encoding", "chunked") {
        return read_chunked(input);
    }
    if let Some(len) = header(headers, "content-length") {
        let len: usize = std::str::from_utf8(len)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| invalid("bad Content-Length"))?;
        let mut body = vec![0; len];
        input.read_exact(&mut body)?;
        return Ok(body);
    }
    let mut body = Vec::new();
    if !is_request {
        // A response without framing ends when the server closes.
        input.read_to_end(&mut body)?;
    }
    Ok(body)
}

fn read_chunked(input: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size line"))?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if input.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        input.read_exact(&mut body[start..])?;
        line.clear();
        input.read_line(&mut line)?; // CRLF after the chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_request_bodies_are_joined_and_resent_with_a_length() {
        let raw = b"PUT /b/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
                    3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
        let mut input = &raw[..];
        let req = read_request(&mut input, || Ok(())).unwrap().unwrap();
        assert_eq!((req.method.as_str(), req.target.as_str()), ("PUT", "/b/k"));
        assert_eq!(req.body, b"abcde");
        let mut out = Vec::new();
        req.write_to(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Content-Length: 5\r\n"), "{text}");
        assert!(
            !text.to_ascii_lowercase().contains("transfer-encoding"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nabcde"), "{text}");
        let next = read_request(&mut input, || Ok(())).unwrap().unwrap();
        assert_eq!(next.method, "GET");
        assert!(read_request(&mut input, || Ok(())).unwrap().is_none());
    }

    #[test]
    fn responses_to_head_keep_their_length_and_have_no_body() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"e\"\r\n\r\n";
        let resp = read_response(&mut &raw[..], "HEAD").unwrap();
        assert!(resp.body.is_empty());
        let mut out = Vec::new();
        resp.write_to(&mut out, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("Content-Length: 1234").count(), 1, "{text}");
    }

    #[test]
    fn unframed_responses_end_at_eof_and_truncated_ones_fail() {
        let raw = b"HTTP/1.1 200 OK\r\n\r\nall of it";
        assert_eq!(
            read_response(&mut &raw[..], "GET").unwrap().body,
            b"all of it"
        );
        let short = b"HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n\r\nabc";
        let err = read_response(&mut &short[..], "GET").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
