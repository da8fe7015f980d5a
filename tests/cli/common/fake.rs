//! A fake git server on 127.0.0.1 for hostile-server tests: smart HTTP (the
//! request head parsed, then `serve` answers) or `git://` (the raw connection),
//! a thread per connection, counting connections; stopped on drop (connections
//! end when the client goes away, which makes every write fail).

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// What a fake smart HTTP server does with one request: its method and
/// target, the connection, and the stop flag.
pub type Serve = fn(&str, &str, TcpStream, &AtomicBool);

/// The same, given the whole request head, for servers that look at headers.
pub type ServeHead = dyn Fn(&str, TcpStream, &AtomicBool) + Send + Sync;

/// A fake smart HTTP git server on 127.0.0.1, a thread per connection.
pub struct FakeGitHttp {
    pub port: u16,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeGitHttp {
    pub fn start(serve: Serve) -> FakeGitHttp {
        FakeGitHttp::start_on(
            "127.0.0.1",
            Arc::new(move |head: &str, stream, stop: &AtomicBool| {
                let mut first = head.split_whitespace();
                let method = first.next().unwrap_or("GET").to_string();
                let target = first.next().unwrap_or("/").to_string();
                serve(&method, &target, stream, stop);
            }),
        )
    }

    /// A `git://` server instead: `serve` gets the connection as it is.
    pub fn start_git(serve: fn(TcpStream, &AtomicBool)) -> FakeGitHttp {
        FakeGitHttp::start_with(
            "127.0.0.1",
            false,
            Arc::new(move |_: &str, stream, stop: &AtomicBool| serve(stream, stop)),
        )
    }

    pub fn start_on(ip: &str, serve: Arc<ServeHead>) -> FakeGitHttp {
        FakeGitHttp::start_with(ip, true, serve)
    }

    pub fn start_with(ip: &str, http: bool, serve: Arc<ServeHead>) -> FakeGitHttp {
        let listener = TcpListener::bind((ip, 0)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (connections.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut workers = Vec::new();
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        c.fetch_add(1, Ordering::SeqCst);
                        let _ = stream.set_nonblocking(false);
                        let (s2, serve) = (s.clone(), serve.clone());
                        workers.push(std::thread::spawn(move || {
                            if !http {
                                serve("", stream, &s2);
                            } else if let Some((head, stream)) = read_head(stream) {
                                serve(&head, stream, &s2);
                            }
                        }));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            for w in workers {
                let _ = w.join();
            }
        });
        FakeGitHttp {
            port,
            connections,
            stop,
            thread: Some(thread),
        }
    }

    pub fn rewrite(&self, owner: &str) -> String {
        format!(
            "https://github.com/{owner}/=http://127.0.0.1:{}/{owner}/",
            self.port
        )
    }

    pub fn git_rewrite(&self, owner: &str) -> String {
        format!(
            "https://github.com/{owner}/=git://127.0.0.1:{}/{owner}/",
            self.port
        )
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for FakeGitHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request head (returned whole) and its `Content-Length` body.
pub fn read_head(stream: TcpStream) -> Option<(String, TcpStream)> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((head, stream))
}

/// A record `bad` whose one source is `README.md` of `evil/repo`, which a
/// `--rewrite` sends to a [`FakeGitHttp`].
pub fn evil_pin() -> Value {
    let sha = "de1fa14ea798512f54dafc8b8795eb3ef1a6c367";
    json!({
        "schema": "pinaudit/pins/v1",
        "id": "bad",
        "title": null,
        "sources": [{
            "id": "readme",
            "url": format!("https://github.com/evil/repo/blob/{sha}/README.md"),
            "revision": sha,
            "path": "README.md",
        }],
        "claims": [],
        "artifacts": [],
    })
}
