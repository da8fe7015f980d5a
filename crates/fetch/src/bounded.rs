//! Limits on what one repository's sync may cost, whatever the server does.
//!
//! libgit2 offers a callback only while a pack arrives, and a socket timeout
//! that restarts with every byte. So a server that trickles a byte a second, or
//! that sends an endless ref advertisement, was never cut off (issue
//! "Reliability and security": 3 GB of memory in 45 s). The defences:
//!
//! - [`Budget`]: an overall deadline and a byte budget per repository sync,
//!   checked by the transfer progress callback (packs) and by the transports
//!   below (everything, the advertisement included).
//! - [`GitSubtransport`]: pinaudit's own `git://` subtransport for
//!   libgit2, a plain TCP stream that counts bytes and stops at the deadline.
//! - pinaudit's smart HTTP(S) subtransport (`super::http`), installed beside it
//!   by `super::transport`: the advertisement and the packs count
//!   against the same budget there, redirects are followed within limits, and
//!   credentials go only to the host they belong to.
//! - A minimum-progress rule: every `--timeout` spent waiting for a server must
//!   bring at least [`MIN_BYTES_PER_SEC`] bytes a second on average, so a server
//!   that trickles a byte every two seconds is cut off after one `--timeout`,
//!   not at the deadline (git's keep-alive, five bytes every five seconds,
//!   passes).
//!
//! Connections a record leads to (not a `--rewrite` target the user chose) go
//! only to public addresses, checked on the addresses connected to
//! ([`crate::net::Network::lookup`]).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};

use super::options::SyncOptions;

/// The limits of one repository's sync, and why they tripped.
#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) deadline: Instant,
    deadline_secs: u64,
    max_bytes: u64,
    max_objects: u64,
    max_ref_bytes: u64,
    pub(crate) idle: Duration,
    pub(crate) connect: Duration,
    /// Connect only to public addresses (a record's own host, no --allow-local).
    pub(crate) public_only: bool,
    /// Where connections go (the command's `--resolve` pins).
    pub(crate) network: crate::net::Network,
    tripped: Mutex<Option<String>>,
}

/// What one object of a pack being fetched costs in memory, in bytes, as the
/// budget counts it: libgit2's indexer keeps an entry, a slot of its id map
/// and a pointer per object until the pack is indexed (measured: about 120
/// bytes an object, a pack of 8-byte blobs growing to 375 MiB resident at 2.9
/// million objects); the rest is headroom for the map doubling.
pub(crate) const OBJECT_COST: u64 = 160;

/// The least average rate, in bytes a second, of a server over each
/// `--timeout` spent waiting for it (see the module docs).
pub(crate) const MIN_BYTES_PER_SEC: f64 = 0.75;

impl Budget {
    pub(crate) fn new(opts: &SyncOptions) -> Arc<Self> {
        Arc::new(Budget {
            deadline: Instant::now() + opts.deadline,
            deadline_secs: opts.deadline.as_secs(),
            max_bytes: opts.max_fetch_bytes,
            max_objects: opts.max_fetch_objects,
            max_ref_bytes: opts.max_ref_bytes,
            idle: opts.timeout,
            connect: opts.connect_timeout,
            public_only: opts.public_only,
            network: opts.network.clone(),
            tripped: Mutex::new(None),
        })
    }

    /// Why the sync was cut off, if it was.
    pub(crate) fn tripped(&self) -> Option<String> {
        self.tripped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn trip(&self, why: String) -> String {
        let mut t = self.tripped.lock().unwrap_or_else(PoisonError::into_inner);
        t.get_or_insert(why).clone()
    }

    pub(crate) fn over_deadline(&self) -> Option<String> {
        (Instant::now() >= self.deadline).then(|| {
            self.trip(format!(
                "timed out: the sync took longer than the deadline of {} s (raise it with --deadline)",
                self.deadline_secs
            ))
        })
    }

    pub(crate) fn over_bytes(
        &self,
        received: u64,
        limit: u64,
        what: &str,
        flag: &str,
    ) -> Option<String> {
        (received > limit).then(|| {
            self.trip(format!(
                "the server sent more {what} than the byte budget of {} MiB (raise it with {flag})",
                limit >> 20
            ))
        })
    }

    /// The byte budget of a ref advertisement (`--max-refs-mib`).
    pub(crate) fn max_ref_bytes(&self) -> u64 {
        self.max_ref_bytes
    }

    /// The byte budget of the packs (`--max-fetch-mib`).
    pub(crate) fn max_pack_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Whether a pack transfer may go on after `received` bytes and
    /// `objects` objects of a pack that announced `announced` (the transfer
    /// progress callback; `false` aborts the fetch).
    pub(crate) fn allows(&self, received: u64, objects: u64, announced: u64) -> bool {
        self.over_bytes(received, self.max_bytes, "data", "--max-fetch-mib")
            .or_else(|| self.over_objects(received, objects, announced))
            .or_else(|| self.over_deadline())
            .is_none()
    }

    /// The object side of the pack budget: libgit2's indexer keeps some
    /// [`OBJECT_COST`] bytes of memory per object until the pack is indexed,
    /// so a pack of tiny objects costs many times its bytes. The objects'
    /// memory and the bytes received together stay within `--max-fetch-mib`,
    /// and a pack whose header announces more objects than the budget could
    /// ever hold is refused before they arrive.
    fn over_objects(&self, received: u64, objects: u64, announced: u64) -> Option<String> {
        let most = self.max_objects;
        if announced > most || objects > most {
            return Some(self.trip(format!(
                "the server {} a pack of {} objects, more than the object budget of {most} (raise it with --max-fetch-objects)",
                if announced > most { "announced" } else { "sent" },
                announced.max(objects)
            )));
        }
        let mib = self.max_bytes >> 20;
        if announced.saturating_mul(OBJECT_COST) > self.max_bytes {
            return Some(self.trip(format!(
                "the server announced a pack of {announced} objects, more than the byte budget of {mib} MiB holds at {OBJECT_COST} bytes of index memory an object (raise it with --max-fetch-mib)"
            )));
        }
        let cost = objects.saturating_mul(OBJECT_COST).saturating_add(received);
        (cost > self.max_bytes).then(|| {
            self.trip(format!(
                "the server sent {objects} objects in {} MiB, more than the byte budget of {mib} MiB holds when each object also counts {OBJECT_COST} bytes of index memory (raise it with --max-fetch-mib)",
                received >> 20
            ))
        })
    }
}

/// A stateful `git://` connection: the ref listing and the fetch share it,
/// within the budget of the sync that made it.
pub(crate) struct GitSubtransport {
    budget: Arc<Budget>,
    current: Mutex<Option<TcpStream>>,
}

impl GitSubtransport {
    pub(crate) fn new(budget: Arc<Budget>) -> Self {
        GitSubtransport {
            budget,
            current: Mutex::new(None),
        }
    }
}

impl SmartSubtransport for GitSubtransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let budget = self.budget.clone();
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let (limit, flag, what) = match action {
            Service::UploadPackLs => (budget.max_ref_bytes, "--max-refs-mib", "refs"),
            Service::UploadPack => (budget.max_bytes, "--max-fetch-mib", "data"),
            _ => return Err(git2::Error::from_str("pinaudit only fetches")),
        };
        let stream = match (action, current.as_ref()) {
            (Service::UploadPack, Some(s)) => s.try_clone().map_err(io_to_git)?,
            _ => {
                let s = connect(url, &budget)?;
                *current = Some(s.try_clone().map_err(io_to_git)?);
                s
            }
        };
        Ok(Box::new(Bounded::new(stream, budget, limit, flag, what)))
    }

    fn close(&self) -> Result<(), git2::Error> {
        if let Some(s) = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        Ok(())
    }
}

pub(crate) fn io_to_git(e: io::Error) -> git2::Error {
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Net,
        e.to_string(),
    )
}

/// Connects to a `git://host[:port]/path` URL and sends the upload-pack request.
fn connect(url: &str, budget: &Budget) -> Result<TcpStream, git2::Error> {
    let parsed = ::url::Url::parse(url)
        .map_err(|e| git2::Error::from_str(&format!("invalid git URL: {e}")))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| git2::Error::from_str("the git URL names no host"))?;
    let port = parsed.port().unwrap_or(9418);
    // The addresses checked are the ones connected to: no gap between them.
    let addrs = budget
        .network
        .lookup(host, port, budget.public_only)
        .map_err(io_to_git)?;
    let mut last = None;
    let mut stream = None;
    for addr in addrs {
        let wait = budget
            .connect
            .min(budget.deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_millis(1));
        match TcpStream::connect_timeout(&addr, wait) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut stream = stream.ok_or_else(|| {
        let why = last.map_or_else(|| "no address".to_string(), |e| e.to_string());
        io_to_git(io::Error::other(format!(
            "failed to connect to {host}: {why}"
        )))
    })?;
    let _ = stream.set_nodelay(true);
    let host_field = match parsed.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let request = format!("git-upload-pack {}\0host={host_field}\0", parsed.path());
    let line = format!("{:04x}{request}", request.len() + 4);
    stream.write_all(line.as_bytes()).map_err(io_to_git)?;
    Ok(stream)
}

/// A connection that waits at most a given time for each read or write.
pub(crate) trait Conn {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize>;
    fn write_within(&mut self, buf: &[u8], wait: Duration) -> io::Result<usize>;
}

impl Conn for TcpStream {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize> {
        self.set_read_timeout(Some(wait))?;
        self.read(buf)
    }

    fn write_within(&mut self, buf: &[u8], wait: Duration) -> io::Result<usize> {
        self.set_write_timeout(Some(wait))?;
        self.write(buf)
    }
}

/// A connection that stops at the budget's deadline and byte limit, and when
/// the server falls below the minimum progress.
pub(crate) struct Bounded<C> {
    stream: C,
    budget: Arc<Budget>,
    received: u64,
    limit: u64,
    flag: &'static str,
    what: &'static str,
    /// Time spent waiting for the server, and bytes it sent, in this window.
    waited: Duration,
    window_bytes: u64,
}

impl<C: Conn> Bounded<C> {
    pub(crate) fn new(
        stream: C,
        budget: Arc<Budget>,
        limit: u64,
        flag: &'static str,
        what: &'static str,
    ) -> Self {
        Bounded {
            stream,
            budget,
            received: 0,
            limit,
            flag,
            what,
            waited: Duration::ZERO,
            window_bytes: 0,
        }
    }

    fn cut(&self, why: String) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, why)
    }

    /// The longest wait for the next bytes: the idle timeout, never past the deadline.
    fn wait(&self) -> io::Result<Duration> {
        if let Some(why) = self.budget.over_deadline() {
            return Err(self.cut(why));
        }
        let left = self
            .budget
            .deadline
            .saturating_duration_since(Instant::now());
        Ok(self.budget.idle.min(left).max(Duration::from_millis(1)))
    }

    /// The minimum-progress rule, after `waited` more waiting brought `n` bytes.
    fn progress(&mut self, waited: Duration, n: usize) -> io::Result<()> {
        self.waited += waited;
        self.window_bytes += n as u64;
        let window = self.budget.idle.max(Duration::from_secs(1));
        if self.waited < window {
            return Ok(());
        }
        let secs = self.waited.as_secs_f64();
        if (self.window_bytes as f64) < secs * MIN_BYTES_PER_SEC {
            let why = self.budget.trip(format!(
                "timed out: the server sent only {} bytes in {:.0} s of waiting (less than one byte a second; --timeout sets how long it may stall)",
                self.window_bytes, secs
            ));
            return Err(self.cut(why));
        }
        self.waited = Duration::ZERO;
        self.window_bytes = 0;
        Ok(())
    }
}

impl<C: Conn> Read for Bounded<C> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wait = self.wait()?;
        let started = Instant::now();
        let n = match self.stream.read_within(buf, wait) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if let Some(why) = self.budget.over_deadline() {
                    return Err(self.cut(why));
                }
                if let Some(why) = self.budget.tripped() {
                    return Err(self.cut(why));
                }
                return Err(self.cut(format!(
                    "timed out: no answer for {} s",
                    self.budget.idle.as_secs()
                )));
            }
            Err(e) => return Err(e),
        };
        self.received += n as u64;
        if let Some(why) = self
            .budget
            .over_bytes(self.received, self.limit, self.what, self.flag)
        {
            return Err(self.cut(why));
        }
        self.progress(started.elapsed(), n)?;
        Ok(n)
    }
}

impl<C: Conn> Write for Bounded<C> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let wait = self.wait()?;
        if self.what == "refs" && self.received > 0 {
            // A stateful (`git://`) connection carries the fetch on the stream
            // of the ref listing (libgit2 and git2 reuse it, never asking for
            // an upload-pack stream): once the client answers the listing
            // with its wants, what comes back is negotiation and the pack,
            // counted against the pack budget, not the refs budget.
            self.limit = self.budget.max_bytes;
            self.flag = "--max-fetch-mib";
            self.what = "data";
            self.received = 0;
        }
        self.stream.write_within(buf, wait)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
