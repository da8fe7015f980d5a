//! Bakes a digest of the code the binary is built from into it
//! (`PINAUDIT_SOURCE_DIGEST`): what the whole-record report memo remembers is
//! made by all of it (loading, checks, policy, renderers), so a build of other
//! sources never reads back another's report fragments.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn main() {
    let roots = ["src", "crates/core/src", "crates/fetch/src"];
    let mut files: Vec<PathBuf> = Vec::new();
    for root in roots {
        println!("cargo:rerun-if-changed={root}");
        collect(Path::new(root), &mut files);
    }
    for extra in [
        "build.rs",
        "Cargo.lock",
        "Cargo.toml",
        "crates/core/Cargo.toml",
        "crates/fetch/Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={extra}");
        files.push(PathBuf::from(extra));
    }
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        // A file that cannot be read (a published crate without the workspace)
        // counts as its name only.
        let bytes = std::fs::read(f).unwrap_or_default();
        let name = f.to_string_lossy();
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let digest: String = h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=PINAUDIT_SOURCE_DIGEST={digest}");
}

fn collect(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => collect(&path, into),
            Ok(t) if t.is_file() && path.extension().is_some_and(|x| x == "rs") => into.push(path),
            _ => {}
        }
    }
}
