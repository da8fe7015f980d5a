//! `GitDaemon`: `git daemon` on a loopback port serving a base directory,
//! so tests exercise libgit2's `git://` transport against a real server.
//!
//! The daemon runs in its own process group; stopping it signals that group,
//! which also ends the `upload-pack` children it forked per connection.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{free_port, server_git_env, wait_for_port};

/// What `upload-pack` lets a client ask for by commit id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wants {
    /// Stock git: only advertised ref tips (libgit2 then can't fetch by id).
    Default,
    /// `uploadpack.allowReachableSHA1InWant`: any commit some ref reaches.
    Reachable,
    /// `uploadpack.allowAnySHA1InWant`: any object the server has.
    Any,
}

pub struct GitDaemon {
    child: Option<Child>,
    port: u16,
}

impl GitDaemon {
    /// Serve every repository under `base` (`git://127.0.0.1:PORT/NAME`).
    pub fn start(base: &Path, wants: Wants) -> Self {
        for _ in 0..5 {
            let port = free_port();
            let mut child = Command::new("git")
                .arg("daemon")
                .arg("--export-all")
                .arg(format!("--base-path={}", base.display()))
                .arg("--listen=127.0.0.1")
                .arg(format!("--port={port}"))
                .arg("--reuseaddr")
                .arg("--informative-errors")
                .arg("--max-connections=64")
                .envs(server_git_env(wants))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .expect("spawn git daemon");
            if wait_for_port(port, Duration::from_secs(10)) {
                return GitDaemon {
                    child: Some(child),
                    port,
                };
            }
            // Most likely someone else took the port in between: retry.
            kill_group(&mut child);
        }
        panic!("git daemon did not start");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `git://127.0.0.1:PORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{}", self.port, name)
    }

    /// Stop the daemon and its per-connection children.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(&mut child);
        }
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Signal the process group led by `child` (started with `process_group(0)`,
/// so its id is the group id) and reap it.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-TERM", "--", &group])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}
