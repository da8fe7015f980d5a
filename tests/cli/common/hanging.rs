//! `HangingServer`: accepts TCP connections and never answers, the way a
//! wedged server or a black-holing proxy behaves, to test timeouts; or answers
//! every connection with the same bytes, as a server speaking garbage does.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct HangingServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HangingServer {
    pub fn start() -> Self {
        Self::serve(None)
    }

    /// A server that reads what it is sent, answers every connection with
    /// `answer` and closes it: a forge speaking something other than git.
    #[allow(dead_code)] // `tests/fetch_timeout.rs` shares this module, not this use.
    pub fn answering(answer: &'static [u8]) -> Self {
        Self::serve(Some(answer))
    }

    fn serve(answer: Option<&'static [u8]>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // Held open, unread, until stopped.
            let mut held: Vec<TcpStream> = Vec::new();
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut stream, _)) if answer.is_some() => {
                        use std::io::{Read, Write};
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                        let _ = stream.read(&mut [0u8; 4096]);
                        let _ = stream.write_all(answer.unwrap_or_default());
                    }
                    Ok((stream, _)) => held.push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        HangingServer {
            port,
            stop,
            thread: Some(thread),
        }
    }

    /// A URL of `scheme` (`git`, `http`) on this server.
    pub fn url(&self, scheme: &str, name: &str) -> String {
        format!("{scheme}://127.0.0.1:{}/{name}", self.port)
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HangingServer {
    fn drop(&mut self) {
        self.stop();
    }
}
