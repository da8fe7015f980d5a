//! Fixtures shared by the integration tests: one way to run the binary in a
//! scratch directory ([`scratch`]), inputs built in code ([`inputs`], [`seed`]),
//! real git repositories built with git2 in temporary directories ([`fixture`],
//! [`forge`]), and loopback servers that serve them the way remotes do
//! (`git daemon`, `git http-backend` behind a tiny HTTP server), plus a server
//! that accepts connections and never answers.

pub mod daemon;
pub mod fake;
pub mod fixture;
pub mod forge;
pub mod hanging;
pub mod http;
pub mod inputs;
pub mod pack;
pub mod run;
pub mod scratch;
pub mod seed;
pub mod show;
pub mod web;

pub use daemon::{GitDaemon, Wants};
pub use fixture::FixtureRepo;
pub use hanging::HangingServer;
pub use http::HttpGitServer;

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A port on 127.0.0.1 that was free a moment ago (bound to :0, released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// Wait until something accepts connections on `port`, up to `limit`.
pub fn wait_for_port(port: u16, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Environment that keeps the machine's git configuration out of the
/// servers, plus the `uploadpack.*` settings of `wants`.
pub(crate) fn server_git_env(wants: Wants) -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
    ];
    let settings: &[&str] = match wants {
        Wants::Default => &[],
        Wants::Reachable => &["uploadpack.allowReachableSHA1InWant"],
        Wants::Any => &["uploadpack.allowAnySHA1InWant"],
    };
    env.push(("GIT_CONFIG_COUNT".to_string(), settings.len().to_string()));
    for (i, key) in settings.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), (*key).to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), "true".to_string()));
    }
    env
}
