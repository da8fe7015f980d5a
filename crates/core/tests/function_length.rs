//! No function of the core crate or of the fetch crate is longer than 100
//! lines, outside tests and the matcher's tables (state machines whose arms
//! read as one table).
//!
//! A function's length is the lines from its `fn` line to its closing brace;
//! comments, strings and character literals are blanked before braces are
//! counted; `#[cfg(test)]` modules and `#[test]` functions are not read.
//! `scripts/long-fns.py` lists the long functions of any directory by the same rule.

use std::path::Path;

const LIMIT: usize = 100;

/// `file::function` pairs allowed to be longer: the matcher's tables, and the
/// functions not split yet (each one a debt, listed to be paid).
const ALLOWED: &[&str] = &[
    // The matcher's tables.
    "matcher/structure.rs::step",
    "matcher/role.rs::read",
    // Not split yet.
    "matcher.rs::find_claim",
    "matcher.rs::scan_at",
    // Another change rewords its findings; split after it lands.
    "check/upstream.rs::report",
];

/// The same for the fetch crate (`crates/fetch/src`).
const FETCH_ALLOWED: &[&str] = &[];

/// The text with comments, strings and character literals replaced by spaces,
/// line ends kept.
fn blank(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                keep(&mut out, b[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    if depth == 0 {
                        out.push_str("  ");
                        i += 2;
                        break;
                    }
                }
                keep(&mut out, b[i]);
                i += 1;
            }
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&b, i) {
            let mut j = i + 1;
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut k = j + 1;
            while k < b.len()
                && !(b[k] == '"' && (0..hashes).all(|h| b.get(k + 1 + h) == Some(&'#')))
            {
                k += 1;
            }
            let end = (k + 1 + hashes).min(b.len());
            for &ch in &b[i..end] {
                keep(&mut out, ch);
            }
            i = end;
        } else if c == '"' {
            keep(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    keep(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    keep(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                keep(&mut out, b[i]);
                i += 1;
            }
        } else if c == '\'' {
            // A character literal, or a lifetime (kept).
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&k| b[k] == '\'').map(|k| k + 1)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &ch in &b[i..end] {
                        keep(&mut out, ch);
                    }
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// The line of the brace that closes the first block opened at or after
/// `start`; `None` for a declaration without a body.
fn close_of(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(start) {
        for ch in line.chars() {
            match ch {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => {
                    depth -= 1;
                    if opened && depth == 0 {
                        return Some(k);
                    }
                }
                ';' if !opened && depth == 0 => return None,
                _ => {}
            }
        }
    }
    None
}

/// The name after `fn` when the line starts a function.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    for word in ["const ", "async ", "unsafe "] {
        if let Some(r) = rest.strip_prefix(word) {
            rest = r.trim_start();
        }
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

fn is_mod(line: &str) -> bool {
    let t = line.trim_start();
    let t = t
        .strip_prefix("pub(crate) ")
        .or_else(|| t.strip_prefix("pub "))
        .unwrap_or(t);
    t.starts_with("mod ") && t.trim_end().ends_with('{')
}

/// `(name, first line, length)` of each function outside tests.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let blanked = blank(text);
    let lines: Vec<&str> = blanked.split('\n').collect();
    let mut out = Vec::new();
    let mut skip_until: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if skip_until.is_some_and(|end| i <= end) {
            continue;
        }
        let name = fn_name(line);
        if name.is_none() && !is_mod(line) {
            continue;
        }
        let test = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("#["))
            .any(|l| matches!(l.trim(), "#[cfg(test)]" | "#[test]"));
        let Some(end) = close_of(&lines, i) else {
            continue;
        };
        if test {
            skip_until = Some(end);
        } else if let Some(name) = name {
            out.push((name.to_string(), i + 1, end - i + 1));
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Fails on a function of `src` over [`LIMIT`] lines not in `allowed`, and
/// on an entry of `allowed` that is no longer long.
fn hold_to_the_limit(src: &Path, allowed: &[&str]) {
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut long = Vec::new();
    let mut seen = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        let rel = file
            .strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        for (name, line, length) in functions(&text) {
            let id = format!("{rel}::{name}");
            if length <= LIMIT {
                continue;
            }
            if allowed.contains(&id.as_str()) {
                seen.push(id);
            } else {
                long.push(format!("{rel}:{line} `{name}` is {length} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines in `{}` (split them):\n{}",
        src.display(),
        long.join("\n")
    );
    let stale: Vec<&&str> = allowed
        .iter()
        .filter(|a| !seen.iter().any(|s| s == **a))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed but no longer long (drop them from the list): {stale:?}"
    );
}

#[test]
fn no_function_over_100_lines() {
    hold_to_the_limit(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), ALLOWED);
}

#[test]
fn no_function_of_the_fetch_crate_over_100_lines() {
    let fetch = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fetch/src");
    hold_to_the_limit(&fetch, FETCH_ALLOWED);
}

#[test]
fn the_rule_counts_bodies_not_strings_or_tests() {
    let text = "fn a() {\n    let s = \"}}}\";\n    let c = '}';\n    // }\n}\n\
                #[cfg(test)]\nmod tests {\n    fn long() {\n\n\n    }\n}\n\
                pub(crate) fn b<'a>(x: &'a str) -> &'a str {\n    x\n}\n";
    let f = functions(text);
    assert_eq!(
        f,
        vec![("a".to_string(), 1, 5), ("b".to_string(), 13, 3)],
        "{f:?}"
    );
}
