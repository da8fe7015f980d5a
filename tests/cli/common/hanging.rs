//! `HangingServer`: accepts TCP connections and never answers, the way a
//! wedged server or a black-holing proxy behaves, to test timeouts.

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
