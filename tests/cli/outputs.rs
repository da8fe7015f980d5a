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
