//! The layering of each crate of the workspace, checked from its sources.
//!
//! Cargo already refuses a cycle between crates; inside a crate the compiler accepts
//! any cycle between modules, so this test is the border there. In each crate, the
//! modules that share a parent form a graph: `a` depends on `b` when code under `a`
//! names an item under `b` (by `crate::`, `super::` or `self::` paths, following
//! `use` re-exports to where the item lives). That graph must have no cycle, at
//! every level. A module using its own parent or children is not an edge: that is
//! how a module and its parts talk. Test modules (`#[cfg(test)] mod tests`) and
//! comments are not read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

/// One crate's modules: path -> (file, text without comments and tests).
struct Crate {
    modules: BTreeMap<ModPath, (PathBuf, String)>,
}

fn module_path(root: &Path, file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(root).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match stem {
        "lib" if parts.is_empty() => {}
        "main" if parts.is_empty() => return None,
        "mod" => {}
        _ => parts.push(stem.to_string()),
    }
    Some(parts)
}

/// The text of a module as the layering sees it: no comments, no test module.
fn code_of(text: &str) -> String {
    let cut = text
        .find("#[cfg(test)]\nmod tests")
        .or_else(|| text.find("#[cfg(test)]\npub(crate) mod tests"))
        .unwrap_or(text.len());
    text[..cut]
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_crate(root: &Path) -> Crate {
    let mut modules = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(m) = module_path(root, &path) {
                let text = std::fs::read_to_string(&path).expect("read");
                modules.insert(m, (path, code_of(&text)));
            }
        }
    }
    Crate { modules }
}

/// Every `use` tree of a module, flattened: (name it is known by, path).
fn uses(code: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        let tree_chars = |c: char| c.is_alphanumeric() || " \n\t_:{},*".contains(c);
        if !rest[..end].chars().all(tree_chars) {
            continue; // "use" in a string or an identifier, not a use declaration
        }
        let mut tree = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        for tight in ["::", "{", "}", ","] {
            tree = tree
                .replace(&format!(" {tight}"), tight)
                .replace(&format!("{tight} "), tight);
        }
        flatten(&tree, &mut Vec::new(), &mut out);
        rest = &rest[end..];
    }
    out
}

fn flatten(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let n = prefix.len();
        prefix.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    flatten(&inner[start..i], prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        flatten(&inner[start..], prefix, out);
        prefix.truncate(n);
        return;
    }
    if tree.is_empty() || tree.ends_with('*') {
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a)),
        None => (tree, None),
    };
    let mut full = prefix.clone();
    full.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
    let name = match alias {
        Some(a) => a.to_string(),
        None => match full.last().map(String::as_str) {
            Some("self") => full
                .get(full.len().wrapping_sub(2))
                .cloned()
                .unwrap_or_default(),
            Some(last) => last.to_string(),
            None => return,
        },
    };
    if full.last().map(String::as_str) == Some("self") {
        full.pop();
    }
    out.push((name, full));
}

/// Every path starting at `crate`, `super` or `self` in a module's code, with the
/// byte offset where it starts.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            if at > 0 && bytes[at - 1] == b':' {
                continue;
            }
            let mut segs = vec![start.trim_end_matches(':').to_string()];
            let mut j = at + start.len();
            loop {
                let k = j + code[j..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(code.len() - j);
                if k == j {
                    break;
                }
                segs.push(code[j..k].to_string());
                if code[k..].starts_with("::") {
                    j = k + 2;
                } else {
                    break;
                }
            }
            out.push((at, segs));
        }
    }
    out
}

impl Crate {
    /// The module (and, for an item, the module it really lives in) that `segs`
    /// names from module `here`.
    fn resolve(&self, here: &ModPath, segs: &[String], depth: usize) -> Option<ModPath> {
        let mut cur: ModPath = match segs.first()?.as_str() {
            "crate" => Vec::new(),
            "super" => here[..here.len().checked_sub(1)?].to_vec(),
            "self" => here.clone(),
            // A path relative to `here` (`use inner::Thing` in `a` names `a::inner`).
            first
                if self
                    .modules
                    .contains_key(&[here.as_slice(), &[first.to_string()]].concat()) =>
            {
                here.clone()
            }
            _ => return None,
        };
        let skip = usize::from(matches!(segs[0].as_str(), "crate" | "super" | "self"));
        let mut rest = &segs[skip..];
        while let Some(s) = rest.first() {
            match s.as_str() {
                "super" => {
                    cur.pop();
                }
                "self" => {}
                _ => {
                    let mut next = cur.clone();
                    next.push(s.clone());
                    if self.modules.contains_key(&next) {
                        cur = next;
                    } else {
                        // An item of `cur`: follow a `use` that brings it there.
                        if depth < 8 {
                            let code = &self.modules.get(&cur)?.1;
                            for (name, path) in uses(code) {
                                if &name == s {
                                    if let Some(m) = self.resolve(&cur, &path, depth + 1) {
                                        return Some(m);
                                    }
                                }
                            }
                        }
                        return Some(cur);
                    }
                }
            }
            rest = &rest[1..];
        }
        Some(cur)
    }

    /// The sibling edges: (parent, from child, to child) -> an example reference.
    fn edges(&self) -> BTreeMap<(ModPath, String, String), String> {
        let mut edges = BTreeMap::new();
        for (here, (file, code)) in &self.modules {
            let mut refs: Vec<(usize, Vec<String>)> = paths(code);
            for (_, path) in uses(code) {
                refs.push((usize::MAX, path));
            }
            for (at, segs) in refs {
                let Some(there) = self.resolve(here, &segs, 0) else {
                    continue;
                };
                let common = here.iter().zip(&there).take_while(|(a, b)| a == b).count();
                if common == here.len() || common == there.len() {
                    continue; // an ancestor or a descendant
                }
                let line = if at == usize::MAX {
                    "a use".to_string()
                } else {
                    format!("line {}", code[..at].lines().count())
                };
                edges
                    .entry((
                        here[..common].to_vec(),
                        here[common].clone(),
                        there[common].clone(),
                    ))
                    .or_insert_with(|| format!("{} ({line}: {})", file.display(), segs.join("::")));
            }
        }
        edges
    }
}

/// The cycles among siblings, each as its modules in order with the references
/// that close it.
fn cycles(edges: &BTreeMap<(ModPath, String, String), String>) -> Vec<String> {
    let mut by_parent: BTreeMap<&ModPath, HashMap<&str, Vec<&str>>> = BTreeMap::new();
    for (parent, from, to) in edges.keys() {
        by_parent
            .entry(parent)
            .or_default()
            .entry(from.as_str())
            .or_default()
            .push(to.as_str());
    }
    let mut found = Vec::new();
    for (parent, graph) in by_parent {
        let mut done: BTreeSet<&str> = BTreeSet::new();
        let mut nodes: Vec<&str> = graph.keys().copied().collect();
        nodes.sort_unstable();
        for start in nodes {
            let mut stack: Vec<&str> = Vec::new();
            dfs(start, &graph, &mut stack, &mut done, &mut |cycle| {
                let mut text = format!("in `{}`:", parent.join("::"));
                for w in cycle.windows(2) {
                    let key = (parent.clone(), w[0].to_string(), w[1].to_string());
                    text += &format!("\n  {} -> {}: {}", w[0], w[1], edges[&key]);
                }
                found.push(text);
            });
        }
    }
    found
}

fn dfs<'a>(
    node: &'a str,
    graph: &HashMap<&'a str, Vec<&'a str>>,
    stack: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
    report: &mut dyn FnMut(Vec<&'a str>),
) {
    if done.contains(node) {
        return;
    }
    if let Some(i) = stack.iter().position(|n| *n == node) {
        let mut cycle = stack[i..].to_vec();
        cycle.push(node);
        report(cycle);
        return;
    }
    stack.push(node);
    for next in graph.get(node).into_iter().flatten() {
        dfs(next, graph, stack, done, report);
    }
    stack.pop();
    done.insert(node);
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut all = Vec::new();
    for root in ["src", "crates/core/src", "crates/fetch/src"] {
        let krate = read_crate(&workspace().join(root));
        assert!(krate.modules.len() > 3, "{root}: too few modules read");
        let edges = krate.edges();
        assert!(edges.len() > 10, "{root}: too few dependencies read");
        all.extend(cycles(&edges));
    }
    assert!(all.is_empty(), "module cycles:\n{}", all.join("\n"));
}

#[test]
fn the_checker_sees_a_cycle_and_follows_re_exports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a/mod.rs", "mod inner;\npub use inner::Thing;\n"),
        ("a/inner.rs", "use crate::b::Other;\npub struct Thing;\n"),
        (
            "b.rs",
            "// crate::c::Ignored in a comment\npub struct Other;\n",
        ),
        ("c.rs", "use crate::{a::Thing, b};\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let krate = read_crate(dir.path());
    let resolved = krate.resolve(
        &vec!["c".into()],
        &["crate".into(), "a".into(), "Thing".into()],
        0,
    );
    assert_eq!(resolved, Some(vec!["a".to_string(), "inner".to_string()]));
    assert!(cycles(&krate.edges()).is_empty());
    std::fs::write(
        dir.path().join("b.rs"),
        "pub struct Other(crate::c::Back);\n",
    )
    .expect("write");
    let krate = read_crate(dir.path());
    let found = cycles(&krate.edges());
    assert!(
        found
            .iter()
            .any(|c| c.contains("b -> c") && c.contains("c -> b")),
        "{found:?}"
    );
}
