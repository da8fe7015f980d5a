//! `HttpGitServer`: a tiny HTTP/1.1 server on a loopback port that runs
//! `git http-backend` as a CGI per request, so tests exercise libgit2's smart
//! HTTP transport (and HTTP status handling such as 404) against real git.
//!
//! One request per connection (`Connection: close`); bodies by
//! `Content-Length` or chunked. Enough for fetches, not a general server.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{server_git_env, Wants};

pub struct HttpGitServer {
    port: u16,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl HttpGitServer {
    /// Serve every repository under `root` (`http://127.0.0.1:PORT/NAME`).
    pub fn start(root: &Path, wants: Wants) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&requests));
        let root = root.to_path_buf();
        let env = server_git_env(wants);
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        let (root, env) = (root.clone(), env.clone());
                        std::thread::spawn(move || {
                            let _ = serve(stream, &root, &env);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        HttpGitServer {
            port,
            stop,
            requests,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, name)
    }

    /// Connections accepted so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HttpGitServer {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn serve(stream: TcpStream, root: &Path, env: &[(String, String)]) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let request = read_request(&mut reader)?;
    let response = run_backend(&request, root, env)?;
    let mut out = stream;
    out.write_all(&response)?;
    out.flush()
}

fn read_request(reader: &mut impl BufRead) -> io::Result<Request> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if let Some(len) = request.header("content-length") {
        let len: usize = len.parse().unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        request.body = body;
    } else if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked(reader)?;
    }
    Ok(request)
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = size.trim().split(';').next().unwrap_or("0");
        let n = usize::from_str_radix(size, 16)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut chunk = vec![0; n];
        reader.read_exact(&mut chunk)?;
        body.extend_from_slice(&chunk);
        let mut crlf = String::new();
        reader.read_line(&mut crlf)?;
        if n == 0 {
            return Ok(body);
        }
    }
}

fn run_backend(request: &Request, root: &Path, env: &[(String, String)]) -> io::Result<Vec<u8>> {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((request.target.as_str(), ""));
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("GIT_PROJECT_ROOT", PathBuf::from(root))
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("REQUEST_METHOD", &request.method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", request.body.len().to_string())
        .env(
            "CONTENT_TYPE",
            request.header("content-type").unwrap_or_default(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(p) = request.header("git-protocol") {
        cmd.env("GIT_PROTOCOL", p);
    }
    if let Some(e) = request.header("content-encoding") {
        cmd.env("HTTP_CONTENT_ENCODING", e);
    }
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let body = request.body.clone();
    // Written from another thread so a large response can't deadlock us.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_end(&mut output)?;
    let _ = writer.join();
    child.wait()?;
    Ok(cgi_to_http(&output))
}

/// Turn CGI output (headers, blank line, body) into an HTTP/1.1 response.
fn cgi_to_http(output: &[u8]) -> Vec<u8> {
    let (head, body) = match find(output, b"\r\n\r\n") {
        Some(i) => (&output[..i], &output[i + 4..]),
        None => match find(output, b"\n\n") {
            Some(i) => (&output[..i], &output[i + 2..]),
            None => (&output[..0], output),
        },
    };
    let head = String::from_utf8_lossy(head);
    let mut status = "200 OK".to_string();
    let mut headers = String::new();
    for line in head.lines() {
        match line.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("status") => {
                status = value.trim().to_string();
            }
            Some(_) => {
                headers.push_str(line.trim_end());
                headers.push_str("\r\n");
            }
            None => {}
        }
    }
    let mut response = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    response
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
