/*!
The integration tests of pinaudit, in one binary with one module per capability
(ripgrep's layout): one binary links once and runs every test in
one process, and a reader finds the tests of a capability by its name.

- [`architecture`]: no module cycle in any crate of the workspace.
- [`archive`]: Software Heritage standing in for a forge that lost a repository
  or commit, over a fake archive API on loopback.
- [`as_written`]: each figure checked at the revision it cites, `diff` that never
  reports an unchecked source as fixed, every manifest of a cited tree, messages
  that name their source, time zone and model.
- [`ci_kit`]: the steps of `action.yml` and of the nightly example workflow, run
  as a runner runs them over three nights.
- [`demo`]: the demo a newcomer runs first, offline, on the shipped fixture.
- [`records`]: reading pin files and record documents, the record-level finding
  codes, the offline audit of the seed, exit statuses.
- [`import`]: `pinaudit import` and the pin files it writes (`pins/schema.json`).
- [`formats`]: the text, markdown and JSON reports, `--output`, colour.
- [`outputs`]: `--output` into anything (`/dev/stdout`, a FIFO, a character
  device, a symbolic link), and hostile strings inert in every output.
- [`explain`]: `pinaudit explain CODE`.
- [`git_sources`]: fetching pinned revisions over `git daemon`, smart HTTP and
  `file://`, and the source-level findings of audits over them.
- [`claims`]: whether each cited line carries the claimed value.
- [`drift`]: `upstream-changed` and `value-superseded` at the default branch's head.
- [`durable`]: each checked git source's SWHID in every report, `pin` writing it,
  and `preserve` against a fake Software Heritage API.
- [`show`]: `pinaudit show` and its `--history`.
- [`bad_input`]: inputs pinaudit must survive, naming the culprit.
- [`bounded_inputs`]: a huge document is an `unchecked` source, not an abort;
  record import linear in its input, with every position right.
- [`large_documents`]: documents over the stream threshold judged as streams, with
  the audit's peak memory measured.
- [`recheck`]: scheduled re-checks: fingerprints, `diff`, `--baseline`,
  `pinaudit.toml`, ignore-aware input walking, exit status 3.
- [`one_config`]: one `pinaudit.toml` for every command (found from a
  subdirectory, no stray `./cache`), unpinned URLs as findings rather than an
  incomplete audit, stale sources in every summary, `--min-severity`.
- [`regression`]: one test per defect found in review, named after the defect.
- [`proof_sheet`]: `--format html` read back with an HTML parser: self-contained,
  every claim with its badge and cited line, hostile text inert.
- [`properties`]: property tests (proptest) of URL parsing, cache paths and redaction.
- [`matcher_corpus`]: the value matcher against two labelled corpora of real-shaped
  benchmark documents, with their confusion matrices: one written with the rules
  (`tests/data/matcher/`), one held out, written without reading the matcher
  (`tests/data/matcher_holdout/`).
- [`speed`]: reports identical whatever the cache's stores hold and whatever
  `--jobs` is.
- [`record_memo`]: an unchanged record on unchanged refs answered by one
  lookup, and the same report whatever `records.store` holds (damaged, cut
  short, forged, of other options, from before a branch moved).
- [`fragment_memo`]: an unchanged record file on unchanged refs neither read,
  checked nor rendered again, and the same report in every streamed format
  after edits, moved branches, duplicate ids, other policies or options, and
  whatever `fragments.store` holds.
- [`scale`]: ten times the citations on the same repositories: what a run
  remembers across sources citing one document gives each its own answer; the
  JSON report streamed into `--output` is stdout's.
- [`security`]: no SSRF, no token leak, reports that can't be spoofed, import
  that can't clobber, a cache that refuses what it does not own.
- [`net`]: git over smart HTTP bounded like `git://` (endless advertisement and
  pack, trickling servers, peak memory), names resolving to loopback refused
  (`--resolve`).
- [`hostile`]: trust nothing not recomputed: trees git refuses are never judged,
  a forge answering garbage is a forge that is down.
- [`statement`]: `audit --format in-toto` against the in-toto Statement v1 and
  predicate schemas, and `verify-statement` naming what changed since.
- [`verdicts`]: statuses that say what happened: a network blip, side-branch
  drift, bare weight hashes, hints with real values.

The network timeout is tested in `tests/fetch_timeout.rs`, a binary of its own:
libgit2's timeouts are process-wide, so a short one there must not race the
fetches of these tests.
*/

mod common;

mod architecture;
mod archive;
mod as_written;
mod bad_input;
mod beyond_git;
mod bounded_inputs;
mod cache_safety;
mod ci_kit;
mod claims;
mod demo;
mod drift;
mod durable;
mod explain;
mod formats;
mod fragment_memo;
mod git_sources;
mod hostile;
mod import;
mod large_documents;
mod matcher_corpus;
mod net;
mod one_config;
mod outputs;
mod proof_sheet;
mod properties;
mod recheck;
mod record_memo;
mod records;
mod regression;
mod scale;
mod security;
mod show;
mod speed;
mod statement;
mod verdicts;
mod workflows;
