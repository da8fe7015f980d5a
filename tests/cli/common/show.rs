//! Reading the output of `pinaudit show`: its lines, its `--history` part and
//! its errors.

use git2::Oid;

use super::run::Run;

/// The first seven hex digits of `commit`, as `show` writes commits.
pub fn short(commit: Oid) -> String {
    commit.to_string()[..7].to_string()
}

pub fn lines(stdout: &str) -> Vec<String> {
    stdout.lines().map(str::to_string).collect()
}

/// The `--history` part of `show`'s output (from its heading on).
pub fn history_part(stdout: &str) -> Vec<String> {
    let at = stdout
        .find("history of ")
        .unwrap_or_else(|| panic!("no history in\n{stdout}"));
    lines(&stdout[at..])
}

/// The heading of the history of `range` from `pinned` to `head`.
pub fn history_heading(range: &str, pinned: Oid, head: Oid) -> String {
    format!(
        "history of {range} from {} to the head {}:",
        short(pinned),
        short(head)
    )
}

/// Fails unless `r` is an error: exit 2, nothing on stdout, `error: …`
/// containing `message` on stderr and a `hint: …` line containing `hint`.
pub fn assert_error(r: &Run, message: &str, hint: &str) {
    assert_eq!(r.code(), 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "stdout:\n{}", r.stdout);
    assert!(
        r.stderr.starts_with("error: ") && r.stderr.contains(message),
        "expected `{message}` in:\n{}",
        r.stderr
    );
    let hint_line = r
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint in:\n{}", r.stderr));
    assert!(hint_line.contains(hint), "hint: {hint_line:?}");
}
