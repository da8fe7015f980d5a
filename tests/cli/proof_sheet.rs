//! `--format html`, the proof sheet: read back with an HTML parser (scraper,
//! on html5ever). The demo corpus's page is well-formed, self-contained (no
//! script, no resource from anywhere; links only to cited lines), shows every
//! claim with its badge and cited line, and a hostile record and document stay
//! text.

use scraper::{Html, Selector};
use serde_json::json;

use crate::common::scratch::Scratch;
use crate::common::seed::Remote;
use crate::demo::{copy_dir, repo_root};

pub(crate) fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("a selector")
}

fn text_of(e: scraper::ElementRef<'_>) -> String {
    e.text().collect()
}

/// Parses `page`, failing on any parse error; asserts that it is
/// self-contained and returns it.
pub(crate) fn parse_self_contained(page: &str) -> Html {
    let doc = Html::parse_document(page);
    assert!(doc.errors.is_empty(), "parse errors: {:#?}", doc.errors);
    for tag in [
        "script",
        "link",
        "img",
        "iframe",
        "object",
        "embed",
        "source",
        "video",
        "audio",
        "base",
        "form",
        "svg image",
    ] {
        assert_eq!(doc.select(&sel(tag)).count(), 0, "a <{tag}> element");
    }
    for e in doc
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
    {
        let v = e.value();
        assert!(v.attr("src").is_none(), "src= on <{}>", v.name());
        assert!(
            v.attrs().all(|(name, _)| !name.starts_with("on")),
            "an event handler on <{}>",
            v.name()
        );
        if let Some(href) = v.attr("href") {
            assert_eq!(v.name(), "a", "href= on <{}>", v.name());
            assert!(href.starts_with("https://"), "href {href}");
            assert!(
                href.contains("/blob/"),
                "a link not to a cited line: {href}"
            );
        }
    }
    for style in doc.select(&sel("style")) {
        let css = text_of(style);
        assert!(!css.contains("url("), "a resource in the style sheet");
        assert!(!css.contains("@import"), "an import in the style sheet");
    }
    let viewport = doc
        .select(&sel(r#"meta[name="viewport"]"#))
        .next()
        .expect("a viewport meta for phones");
    assert!(viewport
        .value()
        .attr("content")
        .unwrap()
        .contains("width=device-width"));
    doc
}

/// The demo (README, "Try it") in a scratch checkout.
fn demo() -> Scratch {
    let ws = Scratch::new();
    copy_dir(&repo_root().join("demo"), &ws.path().join("demo"));
    ws
}

const DEMO: [&str; 4] = ["audit", "--config", "demo/pinaudit.toml", "--allow-local"];

#[test]
fn the_demo_proof_sheet_shows_every_claim_with_its_badge_and_cited_line() {
    let ws = demo();
    let json = ws.run(DEMO.iter().chain(&["--format", "json"]));
    let report = json.report();
    let r = ws.run(
        DEMO.iter()
            .chain(&["--format", "html", "--output", "proof.html"]),
    );
    assert_eq!(r.code(), 1, "the demo has errors: {}", r.stderr);
    let page = std::fs::read_to_string(ws.path().join("proof.html")).expect("written");
    let doc = parse_self_contained(&page);

    let records = doc.select(&sel("section.record")).collect::<Vec<_>>();
    assert_eq!(records.len(), 3);
    let mut shown = 0;
    for (record, section) in report["records"].as_array().unwrap().iter().zip(&records) {
        let h2 = text_of(section.select(&sel("h2")).next().unwrap());
        assert_eq!(h2, record["id"].as_str().unwrap());
        let articles = section.select(&sel("article.claim")).collect::<Vec<_>>();
        let claims = record["claims"].as_array().unwrap();
        assert_eq!(articles.len(), claims.len(), "{h2}");
        for (c, a) in claims.iter().zip(&articles) {
            let label = c["label"].as_str().unwrap();
            assert_eq!(text_of(a.select(&sel("h3")).next().unwrap()), label);
            let badge = a.select(&sel(".badge")).next().expect("a badge");
            assert_eq!(text_of(badge), c["status"].as_str().unwrap(), "{label}");
            // The line the report carries is among the lines shown.
            if let Some(line) = c["line_text"].as_str() {
                let cited: Vec<String> = a.select(&sel("pre span.cited")).map(text_of).collect();
                assert!(
                    cited.iter().any(|l| l.ends_with(line)),
                    "{label}: {line:?} not in {cited:#?}"
                );
                shown += 1;
            }
            if c["status"] == "verified" {
                let mark = a.select(&sel("pre span.cited mark")).next();
                let mark = mark.unwrap_or_else(|| panic!("{label}: no marked number"));
                // The value itself, or a derived form (`"correct": 49` for 98%).
                let marked = text_of(mark);
                assert!(
                    marked.chars().any(|ch| ch.is_ascii_digit()),
                    "{label}: marked {marked:?}"
                );
            }
        }
    }
    assert!(shown >= 10, "cited lines shown: {shown}");

    // `decode` of bench-v1 with two lines of context each side, the value marked.
    let v1 = records
        .iter()
        .find(|r| text_of(r.select(&sel("h2")).next().unwrap()) == "bench-v1")
        .expect("bench-v1");
    let decode = v1
        .select(&sel("article.claim"))
        .find(|a| text_of(a.select(&sel("h3")).next().unwrap()) == "decode")
        .expect("decode");
    let lines: Vec<String> = decode
        .select(&sel("pre"))
        .next()
        .unwrap()
        .select(&sel("span.ln"))
        .map(text_of)
        .collect();
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert!(
        lines[2].starts_with('>') && lines[2].contains('7'),
        "{lines:#?}"
    );
    assert_eq!(text_of(decode.select(&sel("mark")).next().unwrap()), "41.3");
    // Drift: the head's line beside the pinned one.
    assert!(text_of(decode).contains("At the head"), "{}", decode.html());
    // Each claim links to its line at the pinned commit.
    let link = decode.select(&sel("a")).next().expect("a link");
    assert!(link
        .value()
        .attr("href")
        .unwrap()
        .ends_with("/README.md#L7"));

    // The summary band and the findings with their hints.
    let band = text_of(doc.select(&sel("header")).next().unwrap());
    for part in [
        "3 record(s)",
        "claim(s) verified",
        "error(s)",
        "warning(s)",
        "note(s)",
        "unchecked",
    ] {
        assert!(band.contains(part), "{part} not in {band}");
    }
    let findings = doc.select(&sel(".findings li")).count();
    assert_eq!(findings, report["findings"].as_array().unwrap().len());
    assert!(doc
        .select(&sel(".findings .hint"))
        .all(|h| text_of(h).starts_with("hint: ")));
    // Sources with their hashes.
    assert!(page.contains(
        report["records"][1]["sources"][0]["sha256"]["actual"]
            .as_str()
            .unwrap()
    ));

    // Issue 47's defects: messages show code, not Markdown backticks; the two
    // sha256 say which is recorded; a branch URL is not "the pinned commit".
    for li in doc.select(&sel(".findings li")) {
        assert!(!text_of(li).contains('`'), "{}", li.html());
    }
    let tables = doc.select(&sel("td.hash")).map(text_of).collect::<Vec<_>>();
    assert!(
        tables.iter().any(|t| t.starts_with("recorded: ")
            && t.contains("at the commit: ")
            && t.contains("(they differ)")),
        "{tables:#?}"
    );
    let links: Vec<String> = doc.select(&sel("article.claim a")).map(text_of).collect();
    assert!(
        links.iter().any(|l| l.contains("on main now (not pinned)")),
        "{links:#?}"
    );
    // Table cells wrap between words; only a hash may break anywhere.
    assert!(
        !page.contains("vertical-align:top;overflow-wrap:anywhere"),
        "table cells must not break words mid-token"
    );
}

/// The page's time is to the second (it was to the nanosecond).
#[test]
fn the_proof_sheet_time_is_to_the_second() {
    let ws = demo();
    let r = crate::common::run::run(
        ws.cmd()
            .env_remove("SOURCE_DATE_EPOCH")
            .args(
                DEMO.iter()
                    .chain(&["--format", "html", "--output", "proof.html"]),
            ),
    );
    assert_eq!(r.code(), 1, "{}", r.stderr);
    let page = std::fs::read_to_string(ws.path().join("proof.html")).expect("written");
    let doc = parse_self_contained(&page);
    let meta = text_of(doc.select(&sel("header .meta")).next().expect("meta"));
    let time = meta.rsplit(' ').next().unwrap_or_default();
    assert!(
        time.len() == 20 && time.ends_with('Z') && !time.contains('.'),
        "{meta}"
    );
}

#[test]
fn hostile_labels_and_documents_stay_text_in_the_proof_sheet() {
    let remote = Remote::new("hostile/bench");
    let doc_line = r#"| <img src=x onerror=alert(1)> | 5 ms </pre><script>alert(2)</script> |"#;
    let commit = remote.repo().commit(
        &[("README.md", format!("# bench\n{doc_line}\n<!-- end\n"))],
        "Results",
        1_786_117_504,
    );
    let work = Scratch::new();
    let label = "<script>alert(3)</script>\u{202e} verified \"'&";
    let pin = json!({
        "schema": "pinaudit/pins/v1",
        "id": "x</h2><script>alert(4)</script>",
        "sources": [{"id": "readme<b>", "url": remote.blob_url(commit, "README.md"),
                     "revision": commit.to_string(), "path": "README.md"}],
        "claims": [{"label": label, "source": "readme<b>", "lines": [2, 2],
                    "value": 5, "unit": "ms"}],
        "artifacts": [],
    });
    work.write("pins/x.json", pin.to_string());
    let r = work.run([
        "audit",
        "--cache",
        "cache",
        "--timeout",
        "10",
        "--format",
        "html",
        "--output",
        "proof.html",
        "--rewrite",
        &remote.rewrite(),
        "pins/x.json",
    ]);
    assert!(matches!(r.code(), 0 | 1), "{}", r.stderr);
    let page = std::fs::read_to_string(work.path().join("proof.html")).expect("written");
    let doc = parse_self_contained(&page);
    let h3 = text_of(
        doc.select(&sel("article.claim h3"))
            .next()
            .expect("the claim"),
    );
    assert_eq!(h3, "<script>alert(3)</script>\\u{202e} verified \"'&");
    let h2 = text_of(doc.select(&sel("section.record h2")).next().unwrap());
    assert_eq!(h2, "x</h2><script>alert(4)</script>");
    let cited = text_of(
        doc.select(&sel("pre span.cited"))
            .next()
            .expect("the cited line"),
    );
    assert!(cited.ends_with(doc_line), "{cited:?}");
    let badge = text_of(doc.select(&sel("article.claim .badge")).next().unwrap());
    assert!(
        ["verified", "rounded", "shifted", "missing", "unchecked"].contains(&badge.as_str()),
        "{badge}"
    );
    // One badge, one article: the label's "verified" is no badge of its own.
    assert_eq!(doc.select(&sel(".badge")).count(), 1);
}
