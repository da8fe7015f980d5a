//! Every output inert and written where it is asked for: `--output` streams into
//! anything that is not a regular file (`/dev/stdout`, a FIFO, a character device)
//! and replaces a regular file whole, through a symbolic link to it; hostile
//! strings from documents and labels come out inert in every output.

use std::io::Read;
use std::path::Path;

use crate::common::inputs::pin_file;
use crate::common::scratch::Scratch;

/// `pinaudit audit --offline --format text ARGS... FILE` in `ws`.
fn audit_text(ws: &Scratch, file: &str, args: &[&str]) -> crate::common::run::Run {
    let mut cmd = ws.cached("audit");
    cmd.args(["--offline", "--format", "text"])
        .args(args)
        .arg(file);
    crate::common::run::run(&mut cmd)
}

#[test]
fn output_to_dev_stdout_prints_the_report() {
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_file("r"));
    let plain = audit_text(&ws, &file, &[]);
    assert!(plain.stdout.contains("r  ("), "{}", plain.stdout);
    let run = audit_text(&ws, &file, &["--output", "/dev/stdout"]);
    assert_eq!(run.code(), plain.code(), "{}", run.stderr);
    assert_eq!(run.stdout, plain.stdout, "{}", run.stderr);
}

#[test]
fn a_fifo_reader_gets_the_whole_report() {
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_file("r"));
    let plain = audit_text(&ws, &file, &[]);
    let fifo = ws.path().join("report.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(&fifo)
                .expect("open the FIFO")
                .read_to_string(&mut text)
                .expect("read the FIFO");
            text
        })
    };
    let run = audit_text(&ws, &file, &["--output", "report.fifo"]);
    // Should the run not have opened the FIFO, a writer of our own ends the
    // reader's wait (O_NONBLOCK: refused when nobody reads any more).
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(0o4000)
            .open(&fifo);
    }
    let got = reader.join().expect("reader");
    assert_eq!(run.code(), plain.code(), "{}", run.stderr);
    assert_eq!(got, plain.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(&fifo).expect("fifo").file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
}

/// A character device of our own in `dir` (a null device made with `mknod`,
/// which needs root); else `/dev/null`, which only a user who may not replace
/// it is pointed at.
fn char_device(dir: &Path) -> Option<std::path::PathBuf> {
    let node = dir.join("null");
    let made = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        return Some(node);
    }
    // Not root (mknod refused): /dev/null can't be replaced by this user anyway.
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(true);
    (!root).then(|| "/dev/null".into())
}

#[test]
fn a_character_device_stays_one() {
    use std::os::unix::fs::FileTypeExt;
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_file("r"));
    let Some(device) = char_device(ws.path()) else {
        panic!("no character device to test with (mknod failed as root)");
    };
    let plain = audit_text(&ws, &file, &[]);
    let run = audit_text(&ws, &file, &["--output", &device.display().to_string()]);
    assert_eq!(run.code(), plain.code(), "{}", run.stderr);
    let kind = std::fs::symlink_metadata(&device)
        .expect("device")
        .file_type();
    assert!(kind.is_char_device(), "replaced: {kind:?}");
    let left: Vec<_> = std::fs::read_dir(device.parent().expect("dir"))
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pinaudit-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_symlinked_output_replaces_its_target_and_stays_a_link() {
    let ws = Scratch::new();
    let file = ws.write_pin(&pin_file("r"));
    let plain = audit_text(&ws, &file, &[]);
    ws.write("reports/real.txt", "the previous report\n");
    std::os::unix::fs::symlink("reports/real.txt", ws.path().join("link.txt")).expect("link");
    let run = audit_text(&ws, &file, &["--output", "link.txt"]);
    assert_eq!(run.code(), plain.code(), "{}", run.stderr);
    let link = std::fs::symlink_metadata(ws.path().join("link.txt")).expect("link");
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let text = std::fs::read_to_string(ws.path().join("reports/real.txt")).expect("target");
    assert_eq!(text, plain.stdout);
    // A link that leads nowhere is refused, and stays as it was.
    std::os::unix::fs::symlink("reports/none/x.txt", ws.path().join("dangling.txt")).expect("link");
    let run = audit_text(&ws, &file, &["--output", "dangling.txt"]);
    run.assert_code(2);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    let link = std::fs::symlink_metadata(ws.path().join("dangling.txt")).expect("link");
    assert!(link.file_type().is_symlink());
    assert!(!ws.path().join("reports/none").exists());
}

// --- Hostile strings inert in every output ----------------------------------------

/// Terminal escapes, a right-to-left override, the Arabic letter mark, a zero-width
/// joiner, tag characters, and HTML and a link for Markdown.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]8;;https://evil.example/\u{7}x \u{202e}evil \u{061c}alm z\u{200d}wj t\u{e0041}\u{e007f} <img src=https://evil.example/x> [here](https://evil.example/)";

/// The characters of [`HOSTILE`] that must never come out as themselves.
const INVISIBLE: [char; 6] = [
    '\u{1b}',
    '\u{7}',
    '\u{202e}',
    '\u{061c}',
    '\u{200d}',
    '\u{e0041}',
];

fn assert_no_raw(what: &str, out: &str) {
    for c in INVISIBLE {
        assert!(
            !out.contains(c),
            "{what}: raw U+{:04X}\n{}",
            c as u32,
            out.escape_debug()
        );
    }
}

/// No live HTML image or link outside code spans.
fn assert_inert_markdown(what: &str, out: &str) {
    assert_no_raw(what, out);
    for line in out.lines() {
        let outside = crate::security::outside_code_spans(line);
        assert!(
            !outside.replace("\\<", "").contains("<img"),
            "{what}: live <img>: {line}"
        );
        assert!(
            !outside.replace("\\]", "").contains("](https://evil"),
            "{what}: live link: {line}"
        );
    }
}

/// A served repository whose document carries [`HOSTILE`] on the cited line, then
/// a commit with a hostile subject that edits it; the record cites it with a
/// hostile label, a claim that holds and one that does not.
struct Hostile {
    ws: Scratch,
    _daemon: crate::common::GitDaemon,
    _forge: crate::common::forge::Forge,
    rewrite: String,
    url: String,
    good: String,
    bad: String,
}

fn hostile() -> Hostile {
    use crate::common::forge::{claim, pin, sha256_hex, source, to_daemon, Forge, T0};
    let forge = Forge::new();
    let repo = forge.repo("acme/hostile");
    let v1 = format!("# Results\n\n| decode | 2.9 tokens/s | {HOSTILE} |\n");
    let v2 = format!("# Results\n\n| decode | 3.1 tokens/s | {HOSTILE} |\n");
    let c1 = repo.commit(&[("README.md", &v1)], "one", T0);
    repo.commit(&[("README.md", &v2)], &format!("two {HOSTILE}"), T0 + 60);
    let daemon = crate::common::GitDaemon::start(forge.path(), crate::common::Wants::Reachable);
    let rewrite = to_daemon(&daemon);
    let time = "2023-11-14T22:13:20Z";
    let s = source(
        "readme",
        "acme/hostile",
        c1,
        "README.md",
        &sha256_hex(&v1),
        time,
    );
    let holds = claim(&format!("decode {HOSTILE}"), &s, 3, 2.9);
    let fails = claim(&format!("batch {HOSTILE}"), &s, 3, 7.7);
    let ws = Scratch::new();
    let good = ws.write_pin(&pin(
        &format!("rec {HOSTILE}"),
        std::slice::from_ref(&s),
        std::slice::from_ref(&holds),
    ));
    std::fs::create_dir_all(ws.path().join("bad")).expect("dir");
    let bad = "bad/rec.json".to_string();
    ws.write_json(
        &bad,
        &pin(
            &format!("rec {HOSTILE}"),
            std::slice::from_ref(&s),
            &[holds, fails],
        ),
    );
    let url = format!("{}#L3", s["url"].as_str().expect("url"));
    Hostile {
        ws,
        _daemon: daemon,
        _forge: forge,
        rewrite,
        url,
        good,
        bad,
    }
}

impl Hostile {
    fn audit(&self, file: &str, format: &str) -> crate::common::run::Run {
        let mut cmd = self.ws.cached("audit");
        cmd.args([
            "--format",
            format,
            "--timeout",
            "10",
            "--rewrite",
            &self.rewrite,
        ])
        .arg(file);
        crate::common::run::run(&mut cmd)
    }
}

#[test]
fn hostile_documents_and_labels_are_inert_in_every_report_format() {
    let h = hostile();
    let json = h.audit(&h.bad, "json");
    let report = json.report();
    // The failing claim is a finding, and the document's line is in the report.
    assert!(
        !report["findings"].as_array().expect("findings").is_empty(),
        "{}\n{}",
        json.stdout,
        json.stderr
    );
    assert!(json.stdout.contains("evil.example"), "{}", json.stdout);
    for format in ["text", "github"] {
        let run = h.audit(&h.bad, format);
        assert_no_raw(format, &run.stdout);
        assert_no_raw(&format!("{format} stderr"), &run.stderr);
        assert!(run.stdout.contains("\\u{202e}"), "{format}: {}", run.stdout);
    }
    let text = h.audit(&h.bad, "text");
    assert!(
        text.stdout.contains("\\u{e0041}\\u{e007f}"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("\\u{61c}alm"), "{}", text.stdout);
    let md = h.audit(&h.bad, "markdown");
    assert_inert_markdown("markdown", &md.stdout);
    // JSON and SARIF are data: serde escapes what JSON needs (controls as
    // `\u001b`), and the record's own text comes back whole when parsed.
    for (format, run) in [("json", json), ("sarif", h.audit(&h.bad, "sarif"))] {
        assert!(!run.stdout.contains('\u{1b}'), "{format}: raw escape");
        assert!(!run.stdout.contains('\u{7}'), "{format}: raw bell");
        let parsed: serde_json::Value = serde_json::from_str(&run.stdout).expect(format);
        assert!(parsed.to_string().contains("\\u001b[2J"), "{format}");
    }
}

#[test]
fn hostile_documents_and_commits_are_inert_in_show_and_its_history() {
    let h = hostile();
    let mut cmd = h.ws.cached("show");
    cmd.args([
        &h.url,
        "--history",
        "--timeout",
        "10",
        "--rewrite",
        &h.rewrite,
    ]);
    let run = crate::common::run::run(&mut cmd);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_no_raw("show", &run.stdout);
    assert!(run.stdout.contains("history of"), "{}", run.stdout);
    // The line, the edited line and the commit subject, each made visible.
    assert!(
        run.stdout.matches("\\u{202e}evil").count() >= 3,
        "{}",
        run.stdout
    );
    // A pin file target: the label is quoted too, and its caret still lines up
    // under the figure of the escaped line.
    let mut cmd = h.ws.cached("show");
    cmd.args([&h.good, "--timeout", "10", "--rewrite", &h.rewrite]);
    let run = crate::common::run::run(&mut cmd);
    assert_no_raw("show pin", &run.stdout);
    assert_no_raw("show pin stderr", &run.stderr);
    // An error quoting a hostile path: stderr escaped too.
    let missing = h
        .url
        .replace("README.md#L3", &format!("x{}.md#L1", "\u{202e}\u{1b}[2J"));
    let mut cmd = h.ws.cached("show");
    cmd.args([&missing, "--timeout", "10", "--rewrite", &h.rewrite]);
    let run = crate::common::run::run(&mut cmd);
    assert_ne!(run.code(), 0);
    assert_no_raw("show error", &run.stderr);
    assert!(run.stderr.contains("\\u{202e}"), "{}", run.stderr);
}

#[test]
fn hostile_findings_are_inert_in_every_diff_format() {
    let h = hostile();
    let old = h.audit(&h.good, "json");
    let new = h.audit(&h.bad, "json");
    h.ws.write("old.json", &old.stdout);
    h.ws.write("new.json", &new.stdout);
    for format in ["text", "markdown", "json"] {
        let run =
            h.ws.run(["diff", "old.json", "new.json", "--format", format]);
        assert!(run.stdout.contains("evil"), "{format}: {}", run.stdout);
        match format {
            "markdown" => assert_inert_markdown("diff markdown", &run.stdout),
            "json" => {
                assert!(!run.stdout.contains('\u{1b}'), "diff json: raw escape");
                serde_json::from_str::<serde_json::Value>(&run.stdout).expect("diff json");
            }
            _ => assert_no_raw("diff text", &run.stdout),
        }
    }
}
