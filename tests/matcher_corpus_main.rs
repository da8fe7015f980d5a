#[path = "cli/matcher_corpus.rs"]
mod matcher_corpus;
