//! A tiny HTTP/1.1 server on loopback for the web-document tests: each
//! request is answered by a handler given the request and how many requests for
//! that path came before it, and logged with the bytes of body sent, so a test
//! can assert that a `304` cost no body. Stopped on drop.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// Header names lowercase.
    pub headers: HashMap<String, String>,
}

/// An answer: status, headers, body, and how long to stall before answering.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub stall: Duration,
    /// Send no `Content-Length`: the body runs until the connection closes.
    pub unsized_body: bool,
}

impl Response {
    pub fn ok(body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: 200,
            body: body.into(),
            ..Response::default()
        }
    }

    pub fn status(status: u16) -> Response {
        Response {
            status,
            ..Response::default()
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// One answered request.
#[derive(Debug, Clone)]
pub struct Logged {
    pub request: Request,
    pub status: u16,
    pub body_bytes: usize,
}

type Handler = dyn Fn(&Request, usize) -> Response + Send + Sync;

pub struct WebServer {
    port: u16,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<Logged>>>,
    thread: Option<JoinHandle<()>>,
}

impl WebServer {
    pub fn start(handler: impl Fn(&Request, usize) -> Response + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let log: Arc<Mutex<Vec<Logged>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let counts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let thread = {
            let (stop, log) = (stop.clone(), log.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (stop, log, handler, counts) =
                                (stop.clone(), log.clone(), handler.clone(), counts.clone());
                            std::thread::spawn(move || {
                                serve(stream, &stop, &log, &*handler, &counts)
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        WebServer {
            port,
            stop,
            log,
            thread: Some(thread),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Every request answered so far, in order.
    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().expect("log").clone()
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(
    mut stream: TcpStream,
    stop: &AtomicBool,
    log: &Mutex<Vec<Logged>>,
    handler: &Handler,
    counts: &Mutex<HashMap<String, usize>>,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&raw);
    let mut lines = text.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_string();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let request = Request { path, headers };
    let nth = {
        let mut c = counts.lock().expect("counts");
        let n = c.entry(request.path.clone()).or_insert(0);
        *n += 1;
        *n - 1
    };
    let response = handler(&request, nth);
    let until = Instant::now() + response.stall;
    while Instant::now() < until {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut head = format!("HTTP/1.1 {} X\r\n", response.status);
    for (k, v) in &response.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let has_body = response.status != 304 && response.status != 204;
    if has_body && !response.unsized_body {
        head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    // Logged before answering: a client that has its answer may read the log
    // at once (logging after the write raced a fast client).
    let body_bytes = if has_body { response.body.len() } else { 0 };
    log.lock().expect("log").push(Logged {
        request,
        status: response.status,
        body_bytes,
    });
    let _ = stream.write_all(head.as_bytes());
    if has_body {
        let _ = stream.write_all(&response.body);
    }
    let _ = stream.flush();
}
