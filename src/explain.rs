//! `pinaudit explain CODE`: what each finding code means and how to fix it.
//!
//! One entry per code; the short fix doubles as the `hint:` line of reports.

use crate::finding::Code;

pub struct Entry {
    pub means: &'static str,
    pub fix: &'static str,
    pub fix_short: &'static str,
}

pub fn entry(code: Code) -> Entry {
    let (means, fix, fix_short) = match code {
        Code::InvalidRecord => (
            "An input file, or one ```json block or field of it, could not be read: the file is \
             empty or truncated, a block is not valid JSON, or a field has the wrong type (a value \
             written as a string, a line number that is negative or absurdly large). The message \
             names the file and the position (line and column, block number, or JSON pointer). \
             Everything else in the input is still audited.",
            "Open the file at the position given and correct the JSON. Values are JSON numbers \
             (`2.9`, not `\"2.9\"`), lines are whole numbers from 1, hashes are 64 hex digits.",
            "correct the input at the position given",
        ),
        Code::UncitedClaim => (
            "A figure names no source document, names one the record does not list, or names no \
             line. Nothing can confirm a number that does not say where it comes from.",
            "Give the figure a `source_document_id` (pin files: `source`) that matches a listed \
             source, and the line that carries the value (`source_line`, or a `#L43` anchor).",
            "name the source document and the line that carries the value",
        ),
        Code::UnpinnedUrl => (
            "A cited URL names a branch, a tag or a short commit id. What it shows can change at \
             any time, so the figure cannot be checked against what the author saw.",
            "Replace the revision with the full 40-hex commit id (on GitHub, press `y` on the \
             file page to turn the URL into a permalink).",
            "cite the full 40-hex commit id instead of a branch, tag or short id",
        ),
        Code::RevisionConflict => (
            "A figure's URL pins one commit but the source it cites declares another, so it is \
             not clear which version of the document the figure was read from.",
            "Make the figure's URL and the source's `revision` name the same commit.",
            "make the URL and the source's declared revision the same commit",
        ),
        Code::MalformedHash => (
            "A recorded sha256 is not 64 hex digits (or an image digest is not `sha256:` and 64 \
             hex digits): it was truncated, padded or pasted from something else, and can match \
             nothing.",
            "Recompute it: `sha256sum FILE` on the document at the pinned commit \
             (`git show COMMIT:PATH | sha256sum`).",
            "recompute the digest: `git show COMMIT:PATH | sha256sum`",
        ),
        Code::MissingHash => (
            "A source has no recorded sha256. The commit pins the document already, but a hash \
             lets anyone confirm the exact bytes without trusting the forge, and tells a \
             CRLF copy from the original.",
            "Add `sha256` (pin files) or `document_sha256` (records): \
             `git show COMMIT:PATH | sha256sum`.",
            "record the document's sha256: `git show COMMIT:PATH | sha256sum`",
        ),
        Code::UnpinnedWeights => (
            "Model weights are named (a label such as `k3-neuron-iq1s, nine GGUF shards`) without \
             a revision and without a hash. Nobody can tell which files were measured, and a \
             re-upload under the same name changes the result silently. Reported once per \
             artifact, however many figures name it.",
            "Record the model repository's commit (`model_revision`) or a sha256 of the weight \
             files (`weight_hash`).",
            "record the weights' revision or sha256",
        ),
        Code::UnpinnedRuntime => (
            "An engine or runtime is named without a revision and without an image digest, so \
             the software that produced the figure cannot be rebuilt. Reported once per \
             artifact.",
            "Record the engine's commit (`runtime_execution_revision`) or the container image \
             digest (`executed_image_digest`, `sha256:…`).",
            "record the runtime's commit or image digest",
        ),
        Code::InconsistentValue => (
            "A percentage disagrees with its own `correct`/`total`: 98.0% with 48/50, or a count \
             larger than its total. The precision written is allowed for: 66.7% for 2/3 is fine, \
             66.0% is not.",
            "Recompute the percentage from the counts, or correct the counts.",
            "recompute the percentage from correct/total",
        ),
        Code::RepositoryMissing => (
            "The remote answered that the repository does not exist (deleted, renamed, made \
             private, or the URL is wrong).",
            "Check the repository URL. If it moved, cite the new location; if it is private, \
             give credentials (`GITHUB_TOKEN` or a git credential helper).",
            "check the repository URL, or give credentials if it is private",
        ),
        Code::RevisionMissing => (
            "The pinned commit is not in the repository: it is in no branch or tag, and fetching \
             it by id failed. It was erased by a force-push and collected, or never existed (a \
             typo, or a commit from a different repository).",
            "Find the commit the figure was read from (`git log -- PATH` in the right repository) \
             and cite it. If the history was rewritten, cite the rewritten commit that carries \
             the same document.",
            "cite a commit that exists in the repository",
        ),
        Code::RevisionUnreachable => (
            "The commit exists but no branch or tag reaches it: it survives only through a pull \
             request ref or as a dangling object after a force-push. It may be collected at any \
             time, and on GitHub a commit from a fork's pull request shows under the parent's URL \
             (an impostor commit).",
            "Cite a commit that is on a branch or tag of the repository, or ask the maintainers \
             to tag this one.",
            "cite a commit that a branch or tag of the repository reaches",
        ),
        Code::PathMissing => (
            "The document path does not exist at the pinned revision (renamed, or the URL \
             mixes a path from another commit).",
            "Cite the path as it was at that commit (`git ls-tree -r COMMIT`), or the commit at \
             which the path exists.",
            "cite the path as it exists at that commit",
        ),
        Code::HashMismatch => (
            "The sha256 of the document at the pinned revision differs from the recorded one. \
             The evidence says which variant of the document the recorded hash does match, if \
             any (`crlf`: hashed after a checkout with CRLF line ends; `lf`; `bom`; \
             `trailing-newline`), and whether it equals the document at another commit in the \
             path's history, naming that commit: that is the version the author actually hashed.",
            "Recompute the hash from the blob at the pinned commit (`git show COMMIT:PATH | \
             sha256sum`), not from a working-tree copy, or pin the commit the evidence names.",
            "hash the blob at the pinned commit: `git show COMMIT:PATH | sha256sum`",
        ),
        Code::CommitTimeMismatch => (
            "The recorded commit time differs from the pinned commit's committer time: the \
             record mixes up dates (author date, experiment date) or commits.",
            "Record the committer time of the pinned commit: `git show -s --format=%cI COMMIT`.",
            "record `git show -s --format=%cI COMMIT`",
        ),
        Code::LineOutOfRange => (
            "The cited line is past the end of the document at the pinned revision.",
            "Cite a line that exists; `pinaudit show URL` prints the document around it.",
            "cite a line that exists at the pinned revision",
        ),
        Code::ValueMissing => (
            "The claimed value is nowhere in the document at the pinned revision: not on the \
             cited line, not on any other, not in a derived form (fraction, count, ratio).",
            "Check the figure against the document (`pinaudit show`), and correct the value or \
             the citation.",
            "check the figure against the document with `pinaudit show`",
        ),
        Code::ValueShifted => (
            "The value is not on the cited line(s) but is on another line of the document. The \
             evidence gives the nearest such line and its text; ties go to the earlier line.",
            "Cite the line the evidence names, after checking it is the same figure.",
            "cite the line the evidence names",
        ),
        Code::UpstreamChanged => (
            "The document differs at the head of the repository's default branch. Nothing is \
             wrong with the pin; this tells a scheduled re-check that the source moved on. The \
             evidence gives the head commit and, for each cited line, whether its text still \
             exists at the head and where.",
            "Read the change (`pinaudit show TARGET --history`) and decide whether the record \
             should cite the newer revision.",
            "read the change with `pinaudit show TARGET --history`",
        ),
        Code::ValueSuperseded => (
            "At the head of the default branch, the cited line is gone or now carries a \
             different number where the value stood: the author probably corrected the figure.",
            "Look at the head line the evidence gives (`pinaudit show TARGET --history`) and \
             update the record if the figure was corrected.",
            "check whether the author corrected the figure: `pinaudit show TARGET --history`",
        ),
    };
    Entry {
        means,
        fix,
        fix_short,
    }
}

/// The text `pinaudit explain CODE` prints.
pub fn render(code: Code) -> String {
    let e = entry(code);
    format!(
        "{code} ({})\n\n{}\n\n{}\n",
        code.severity(),
        wrap(e.means),
        wrap(&format!("How to fix: {}", e.fix))
    )
}

/// Folds whitespace and wraps at 80 columns.
fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut width = 0;
    for word in text.split_whitespace() {
        if width > 0 && width + 1 + word.len() > 80 {
            out.push('\n');
            width = 0;
        } else if width > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(word);
        width += word.len();
    }
    out
}
