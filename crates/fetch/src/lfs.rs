//! Git LFS pointer files (weights checked by their pointers, never
//! downloaded).
//!
//! A model repository keeps its weight files in Git LFS: git holds a small text
//! pointer naming the file's sha256 and size, the bytes live elsewhere. Reading the
//! pointers at a revision tells which weights that revision names without fetching
//! a byte of them. The grammar is the Git LFS specification's
//! (`git-lfs/git-lfs` `docs/spec.md`, "The Pointer"), followed strictly: a
//! blob that bends a rule is not a pointer, and is hashed as the blob it is.

/// The version URL pointers are written with.
pub(crate) const VERSION: &str = "https://git-lfs.github.com/spec/v1";
/// The pre-release version URL, which Git LFS still reads (spec: "Blobs created
/// with the pre-release version of the tool").
const HAWSER_VERSION: &str = "https://hawser.github.com/spec/v1";
/// Git LFS itself never takes a blob this large for a pointer.
pub(crate) const MAX_POINTER_SIZE: usize = 1024;

/// What a pointer says of the file it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pointer {
    /// sha256 of the file, lowercase hex.
    pub(crate) sha256: String,
    /// Size of the file in bytes.
    pub(crate) size: u64,
}

/// Parses `bytes` as a Git LFS v1 pointer; `None` when they are not one.
///
/// The spec's rules, in order: UTF-8 only; every line `{key} {value}\n` with one
/// space and a final newline; keys of `[a-z0-9.-]`; `version` first, the other keys
/// sorted ascending (so no key twice); values without CR or LF; `version`
/// compared as a plain string; `oid` is `sha256:` and 64 lowercase hex digits;
/// `size` a whole number. Unknown keys are allowed (the spec asks tools to keep
/// them).
pub(crate) fn parse(bytes: &[u8]) -> Option<Pointer> {
    if bytes.len() > MAX_POINTER_SIZE {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let body = text.strip_suffix('\n')?;
    let mut lines = body.split('\n');
    let (key, version) = lines.next()?.split_once(' ')?;
    if key != "version" || !(version == VERSION || version == HAWSER_VERSION) {
        return None;
    }
    let mut previous: Option<&str> = None;
    let (mut sha256, mut size) = (None, None);
    for line in lines {
        let (key, value) = line.split_once(' ')?;
        let key_ok = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !key_ok || value.contains('\r') || value.starts_with(' ') {
            return None;
        }
        if previous.is_some_and(|p| p >= key) || key == "version" {
            return None;
        }
        previous = Some(key);
        match key {
            "oid" => {
                let hex = value.strip_prefix("sha256:")?;
                let ok = hex.len() == 64
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                sha256 = ok.then(|| hex.to_string());
                sha256.as_ref()?;
            }
            "size" => {
                let ok = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
                size = Some(ok.then(|| value.parse::<u64>().ok()).flatten()?);
            }
            _ => {}
        }
    }
    Some(Pointer {
        sha256: sha256?,
        size: size?,
    })
}

/// The pointer Git LFS writes for a file of `sha256` and `size`.
#[cfg(test)]
pub(crate) fn write(sha256: &str, size: u64) -> String {
    format!("version {VERSION}\noid sha256:{sha256}\nsize {size}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    #[test]
    fn reads_the_spec_example() {
        let p = parse(write(OID, 12345).as_bytes()).unwrap();
        assert_eq!(p.sha256, OID);
        assert_eq!(p.size, 12345);
        let hawser = format!("version {HAWSER_VERSION}\noid sha256:{OID}\nsize 1\n");
        assert_eq!(parse(hawser.as_bytes()).unwrap().size, 1);
    }

    #[test]
    fn keeps_unknown_keys_in_order() {
        let with_ext =
            format!("version {VERSION}\next-0-foo sha256:{OID}\noid sha256:{OID}\nsize 3\n");
        assert!(parse(with_ext.as_bytes()).is_some());
    }

    #[test]
    fn refuses_what_bends_a_rule() {
        let bad = [
            // no final newline
            format!("version {VERSION}\noid sha256:{OID}\nsize 3"),
            // CRLF line ends
            format!("version {VERSION}\r\noid sha256:{OID}\r\nsize 3\r\n"),
            // two spaces
            format!("version {VERSION}\noid  sha256:{OID}\nsize 3\n"),
            // keys out of order
            format!("version {VERSION}\nsize 3\noid sha256:{OID}\n"),
            // version not first
            format!("oid sha256:{OID}\nversion {VERSION}\nsize 3\n"),
            // version compared as a string
            format!("version {VERSION}/\noid sha256:{OID}\nsize 3\n"),
            // uppercase hex, another hash method, short hex
            format!(
                "version {VERSION}\noid sha256:{}\nsize 3\n",
                OID.to_uppercase()
            ),
            format!("version {VERSION}\noid sha1:{OID}\nsize 3\n"),
            format!("version {VERSION}\noid sha256:{}\nsize 3\n", &OID[1..]),
            // size not a whole number, missing
            format!("version {VERSION}\noid sha256:{OID}\nsize -3\n"),
            format!("version {VERSION}\noid sha256:{OID}\n"),
            // a key with an uppercase letter
            format!("version {VERSION}\noid sha256:{OID}\nsize 3\nZed 1\n"),
            // a blank line
            format!("version {VERSION}\n\noid sha256:{OID}\nsize 3\n"),
        ];
        for b in &bad {
            assert_eq!(parse(b.as_bytes()), None, "{b:?}");
        }
        assert_eq!(parse(&[0xff, 0xfe]), None);
        assert_eq!(parse(&vec![b'a'; 2000]), None);
    }
}
