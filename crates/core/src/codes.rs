//! The finding codes as one table: each code's id, severity, one-line summary,
//! explanation and fix sit in one row (zizmor's `audit_meta!` habit), so `explain`,
//! report hints, the README table and SARIF rules all read the same words.
//!
//! Codes are stable (users grep for them, baselines keep them): never rename one. A new code is one row here, its
//! check in `check/` (with its evidence struct, which names the code), and a test.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How bad a finding is. Ordered: `Note < Warning < Error`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one row of the table says about a code.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub id: &'static str,
    pub severity: Severity,
    /// When the code is raised, in one line (the README's table).
    pub summary: &'static str,
    /// What it means, for `explain`.
    pub means: &'static str,
    /// How to fix it, for `explain`.
    pub fix: &'static str,
    /// The short fix shown as `hint:` under findings.
    pub hint: &'static str,
}

macro_rules! codes {
    ($( $variant:ident = $name:literal, $sev:ident;
        summary: $summary:expr,
        means: $means:expr,
        fix: $fix:expr,
        hint: $hint:expr; )*) => {
        /// A finding code, as the README's table of finding codes names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $( $variant, )* }

        impl Code {
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The code's row of the table.
            pub fn meta(self) -> &'static Meta {
                match self {
                    $( Code::$variant => &Meta {
                        id: $name,
                        severity: Severity::$sev,
                        summary: $summary,
                        means: $means,
                        fix: $fix,
                        hint: $hint,
                    }, )*
                }
            }
        }
    };
}

impl Code {
    pub fn as_str(self) -> &'static str {
        self.meta().id
    }

    pub fn severity(self) -> Severity {
        self.meta().severity
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Code {
    type Err = ();
    fn from_str(s: &str) -> Result<Code, ()> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or(())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map_err(|()| serde::de::Error::custom(format!("unknown finding code `{s}`")))
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

codes! {
    InvalidRecord = "invalid-record", Error;
        summary: "an input (or one JSON block or field of it) cannot be read; says file and position",
        means: "An input file, or one ```json block or field of it, could not be read: the file is \
             empty or truncated, a block is not valid JSON, or a field has the wrong type (a value \
             written as a string, a line number that is negative or absurdly large). The message \
             names the file and the position (line and column, block number, or JSON pointer). \
             Everything else in the input is still audited.",
        fix: "Open the file at the position given and correct the JSON. Values are JSON numbers \
             (`2.9`, not `\"2.9\"`), lines are whole numbers from 1, hashes are 64 hex digits.",
        hint: "correct the input at the position given";

    UncitedClaim = "uncited-claim", Error;
        summary: "a figure names no source document or no line",
        means: "A figure names no source document, names one the record does not list, or names no \
             line. Nothing can confirm a number that does not say where it comes from.",
        fix: "Give the figure a `source_document_id` (pin files: `source`) that matches a listed \
             source, and the line that carries the value (`source_line`, or a `#L43` anchor).",
        hint: "name the source document and the line that carries the value";

    UnpinnedUrl = "unpinned-url", Error;
        summary: "a cited URL names a branch, tag or short SHA instead of a full commit",
        means: "A cited URL names a branch, a tag or a short commit id. What it shows can change at \
             any time, so the figure cannot be checked against what the author saw.",
        fix: "Replace the revision with the full 40-hex commit id (on GitHub, press `y` on the \
             file page to turn the URL into a permalink).",
        hint: "cite the full 40-hex commit id instead of a branch, tag or short id";

    RevisionConflict = "revision-conflict", Error;
        summary: "a figure's URL revision differs from its source's declared revision",
        means: "A figure's URL pins one commit but the record declares another for the source it \
             cites (the message says where), so it is not clear which version of the document \
             the figure was read from. The figure is checked at the commit its URL pins, as a \
             source of its own (`ID@SHORT`). Only a declared revision conflicts: a figure \
             citing another commit of a record document's pinned document, with no \
             supplemental source of its own, is simply checked there.",
        fix: "Make the figure's URL and the source's `revision` name the same commit.",
        hint: "make the URL and the source's declared revision the same commit";

    MalformedHash = "malformed-hash", Error;
        summary: "a recorded hash is not a well-formed sha256",
        means: "A recorded sha256 is not 64 hex digits (or an image digest is not `sha256:` and 64 \
             hex digits): it was truncated, padded or pasted from something else, and can match \
             nothing.",
        fix: "Recompute it: `sha256sum FILE` on the document at the pinned commit \
             (`git show COMMIT:PATH | sha256sum`).",
        hint: "recompute the digest: `git show COMMIT:PATH | sha256sum`";

    MissingHash = "missing-hash", Warning;
        summary: "a source has no recorded sha256",
        means: "A source has no recorded sha256. The commit pins the document already, but a hash \
             lets anyone confirm the exact bytes without trusting the forge, and tells a \
             CRLF copy from the original.",
        fix: "Add `sha256` (pin files) or `document_sha256` (records): \
             `git show COMMIT:PATH | sha256sum`.",
        hint: "record the document's sha256: `git show COMMIT:PATH | sha256sum`";

    UnpinnedWeights = "unpinned-weights", Warning;
        summary: "weights named without revision and without a hash (once per artifact)",
        means: "Model weights are named (a label such as `k3-neuron-iq1s, nine GGUF shards`) without \
             a revision and without a hash. Nobody can tell which files were measured, and a \
             re-upload under the same name changes the result silently. Reported once per \
             artifact, however many figures name it; conditions that name one model by \
             `model` in one place and `model_artifact` in another are one artifact.",
        fix: "Record the model repository's commit (`model_revision`) or a sha256 of the weight \
             files (`weight_hash`).",
        hint: "record the weights' revision or sha256";

    UnpinnedRuntime = "unpinned-runtime", Warning;
        summary: "engine/runtime without revision and without image digest (once per artifact)",
        means: "An engine or runtime is named without a revision and without an image digest, so \
             the software that produced the figure cannot be rebuilt. Reported once per \
             artifact.",
        fix: "Record the engine's commit (`runtime_execution_revision`) or the container image \
             digest (`executed_image_digest`, `sha256:…`).",
        hint: "record the runtime's commit or image digest";

    InconsistentValue = "inconsistent-value", Error;
        summary: "a percentage disagrees with its own correct/total, at the precision written",
        means: "A percentage disagrees with its own `correct`/`total`: 98.0% with 48/50, or a count \
             larger than its total. The precision written is allowed for: 66.7% for 2/3 is fine, \
             66.0% is not.",
        fix: "Recompute the percentage from the counts, or correct the counts.",
        hint: "recompute the percentage from correct/total";

    RepositoryMissing = "repository-missing", Error;
        summary: "the remote answers that the repository does not exist",
        means: "The remote answered that the repository does not exist (deleted, renamed, made \
             private, or the URL is wrong). That answer is a verdict, not a network failure: it \
             stands when no archive could be asked for a copy (evidence `archive`: \
             `unreachable`), and an archive that holds the content turns it into \
             `source-vanished`.",
        fix: "Check the repository URL. If it moved, cite the new location; if it is private, \
             give credentials (`GITHUB_TOKEN` or a git credential helper).",
        hint: "check the repository URL, or give credentials if it is private";

    RevisionMissing = "revision-missing", Error;
        summary: "the commit is not in the repository, not even fetched by id",
        means: "The pinned commit is not in the repository: it is in no branch or tag, and fetching \
             it by id failed. It was erased by a force-push and collected, or never existed (a \
             typo, or a commit from a different repository). The forge's answer stands when no \
             archive could be asked (evidence `archive`: `unreachable`).",
        fix: "Find the commit the figure was read from (`git log -- PATH` in the right repository) \
             and cite it. If the history was rewritten, cite the rewritten commit that carries \
             the same document.",
        hint: "cite a commit that exists in the repository";

    RevisionUnreachable = "revision-unreachable", Warning;
        summary: "the commit exists but no branch or tag reaches it",
        means: "The commit exists but no branch or tag reaches it: it survives only through a pull \
             request ref or as a dangling object after a force-push. It may be collected at any \
             time, and on GitHub a commit from a fork's pull request shows under the parent's URL \
             (an impostor commit).",
        fix: "Cite a commit that is on a branch or tag of the repository, or ask the maintainers \
             to tag this one.",
        hint: "cite a commit that a branch or tag of the repository reaches";

    PathMissing = "path-missing", Error;
        summary: "the document path does not exist at the revision",
        means: "The document path does not exist at the pinned revision (renamed, or the URL \
             mixes a path from another commit).",
        fix: "Cite the path as it was at that commit (`git ls-tree -r COMMIT`), or the commit at \
             which the path exists.",
        hint: "cite the path as it exists at that commit";

    HashMismatch = "hash-mismatch", Error;
        summary: "the document's sha256 differs; evidence names the matching variant or commit",
        means: "The sha256 of the document at the pinned revision differs from the recorded one. \
             The evidence says which variant of the document the recorded hash does match, if \
             any (`crlf`: hashed after a checkout with CRLF line ends; `lf`; `bom`; \
             `trailing-newline`), and whether it equals the document at another commit in the \
             path's history, naming that commit: that is the version the author actually hashed.",
        fix: "Recompute the hash from the blob at the pinned commit (`git show COMMIT:PATH | \
             sha256sum`), not from a working-tree copy, or pin the commit the evidence names.",
        hint: "hash the blob at the pinned commit: `git show COMMIT:PATH | sha256sum`";

    WeightHashMismatch = "weight-hash-mismatch", Error;
        summary: "a recorded weight hash matches no weight file's Git LFS oid at the revision",
        means: "The weights name a model repository, and the recorded `weight_hash` (pin files: \
             the artifact's `sha256`) is not the sha256 of the weight file there, nor of any \
             shard of a multi-file set, nor the manifest hash of the set (sha256 of its \
             `sha256sum` listing). pinaudit reads the files' Git LFS pointers at the revision \
             (never the weights): the evidence lists each file's path, sha256 and size. The \
             hash was taken from other weights, a re-upload, or a local copy that differs.",
        fix: "Take the oid from the pointer at the pinned revision (`git show REV:FILE` in the \
             model repository shows `oid sha256:…`), or pin the revision the hash was taken at.",
        hint: "record the sha256 of the weight file at the pinned revision (its Git LFS oid)";

    ManifestMismatch = "manifest-mismatch", Warning;
        summary: "a SHA256SUMS entry differs from the file at the revision, or names a missing file (`--manifests`)",
        means: "With `--manifests`, every checksum manifest (`SHA256SUMS`, `sha256sums.txt`, in \
             `sha256sum` text, `*` binary or `--tag` form) in the tree at a cited revision (up \
             to 100, none over `--max-document-size`; what a bound leaves out is said on \
             stderr) is checked there. An entry whose sha256 is not the \
             file's, or that lists a file the revision lacks, is reported. As for \
             `hash-mismatch`, the evidence names the variant the listed hash does match \
             (`crlf`: made from a CRLF checkout; `lf`; `bom`; `trailing-newline`) and the \
             commit whose version of the file it matches.",
        fix: "Regenerate the manifest from the blobs at the revision (`git archive REV | tar -x` \
             then `sha256sum FILES`), not from a working tree whose line ends git converted.",
        hint: "regenerate the manifest from the files as committed";

    ManifestUnlisted = "manifest-unlisted", Note;
        summary: "files beside a checksum manifest that it does not list (`--manifests`)",
        means: "With `--manifests`, files in a checksum manifest's directory that the manifest \
             does not list (the manifest itself and its signature aside). Their bytes are not \
             vouched for by the manifest; one finding per manifest names them all.",
        fix: "Add the files to the manifest, or move the manifest beside only what it covers.",
        hint: "list the files in the manifest, or keep it beside only what it covers";

    CommitTimeMismatch = "commit-time-mismatch", Warning;
        summary: "recorded commit time differs from the committer time",
        means: "The recorded commit time differs from the pinned commit's committer time: the \
             record mixes up dates (author date, experiment date), time zones or commits. The \
             message shows both times in UTC, each with its own offset, and how far apart they \
             are: a local wall-clock time written with `Z` is off by the offset exactly.",
        fix: "Record the committer time of the pinned commit: `git show -s --format=%cI COMMIT`.",
        hint: "record `git show -s --format=%cI COMMIT`";

    LineOutOfRange = "line-out-of-range", Error;
        summary: "the cited line is past the end of the document",
        means: "The cited line is past the end of the document at the pinned revision.",
        fix: "Cite a line that exists; `pinaudit show URL` prints the document around it.",
        hint: "cite a line that exists at the pinned revision";

    ValueMissing = "value-missing", Error;
        summary: "the claimed value is nowhere in the document",
        means: "The claimed value is nowhere in the document at the pinned revision: not on the \
             cited line, not on any other, not in a derived form (fraction, count, ratio).",
        fix: "Check the figure against the document (`pinaudit show`), and correct the value or \
             the citation.",
        hint: "check the figure against the document with `pinaudit show`";

    ValueShifted = "value-shifted", Warning;
        summary: "the value is on another line; evidence gives the nearest one",
        means: "The value is not on the cited line(s) but is on another line of the document. The \
             evidence gives the nearest such line and its text; ties go to the earlier line.",
        fix: "Cite the line the evidence names, after checking it is the same figure.",
        hint: "cite the line the evidence names";

    UpstreamChanged = "upstream-changed", Note;
        summary: "the document differs at the default-branch head; evidence follows each cited line",
        means: "The document differs at the head of the repository's default branch (the \
             remote's HEAD), or is gone there: deleted, or pinned on a side branch and never on \
             the default one (evidence `not_on_default_branch`). Nothing is wrong with the pin; \
             this tells a scheduled re-check that the source moved on. The evidence gives the \
             head commit, the default branch's name and, for each cited line, whether its text \
             still exists at the head and where; for a document gone there, how many figures \
             could not be followed (`figures_unfollowed`), said once for them all.",
        fix: "Read the change (`pinaudit show TARGET --history`) and decide whether the record \
             should cite the newer revision.",
        hint: "read the change with `pinaudit show TARGET --history`";

    ValueSuperseded = "value-superseded", Warning;
        summary: "at the head, the cited line is gone or carries a different number",
        means: "At the head of the default branch, the cited line is gone or now carries a \
             different number where the value stood: the author probably corrected the figure.",
        fix: "Look at the head line the evidence gives (`pinaudit show TARGET --history`) and \
             update the record if the figure was corrected.",
        hint: "check whether the author corrected the figure: `pinaudit show TARGET --history`";

    SourceVanished = "source-vanished", Warning;
        summary: "the forge lost the pinned repository or commit (or a web page is gone), but an archive holds it; checked against the archive",
        means: "The forge no longer serves the pinned repository or commit (deleted, renamed, \
             force-pushed away), but Software Heritage holds the very commit: its ids are git's own, and the document's bytes \
             were checked against the git blob id before use. The figures were judged against \
             the archived copy, exactly as from git; the evidence gives the archived copy's \
             SWHID. A cited web page whose host answers 404 or 410 is the same story with the \
             Wayback Machine: a capture whose raw bytes have the recorded sha256 was used. \
             Nothing is wrong with the figures yet, but the citation now rests on the \
             archive alone.",
        fix: "Cite the archived copy (its SWHID, or the capture's URL) beside or instead of \
             the forge URL, or cite where the document lives now.",
        hint: "cite the archived copy by its SWHID, which outlives the forge";
}
