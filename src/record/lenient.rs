//! Field readers that never give up on a whole record because of one bad field.
//!
//! A pin file written by hand, or a record document from a publisher, can have a
//! value written as a string or a line as `-3`. Rejecting the file would lose every
//! other claim in it; instead each reader returns `None` for the bad field and
//! notes a [`Problem`] that the caller turns into an `invalid-record` finding
//! naming the field by its JSON pointer.

use serde_json::{Map, Value};

use super::{ClaimValue, Lines, MAX_LINE};

/// One unreadable field: where (a JSON pointer) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

/// Collects problems while fields are read.
#[derive(Debug, Default)]
pub struct Reader {
    pub problems: Vec<Problem>,
}

/// What a JSON value is, in words, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Shows a value briefly in a message: strings quoted, long ones cut.
pub fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

impl Reader {
    pub fn problem(&mut self, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            pointer: pointer.to_string(),
            message: message.into(),
        });
    }

    fn wrong_type(&mut self, pointer: &str, key: &str, expected: &str, v: &Value) {
        self.problem(
            pointer,
            format!(
                "`{key}` is {} (`{}`), expected {expected}",
                kind(v),
                show(v)
            ),
        );
    }

    /// A text field; absent or null is `None`.
    pub fn string(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<String> {
        match obj.get(key)? {
            Value::Null => None,
            Value::String(s) if s.trim().is_empty() => None,
            Value::String(s) => Some(s.trim().to_string()),
            v => {
                self.wrong_type(&format!("{ptr}/{key}"), key, "a string", v);
                None
            }
        }
    }

    /// A label-like field: strings, and numbers taken as their text.
    pub fn text(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<String> {
        match obj.get(key)? {
            Value::Number(n) => Some(n.to_string()),
            _ => self.string(obj, key, ptr),
        }
    }

    /// A non-negative whole number (counts such as `correct` and `total`).
    pub fn count(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<u64> {
        match obj.get(key)? {
            Value::Null => None,
            Value::Number(n) => match n.as_u64() {
                Some(c) => Some(c),
                None => {
                    self.problem(
                        &format!("{ptr}/{key}"),
                        format!("`{key}` is `{n}`, expected a whole number of at least 0"),
                    );
                    None
                }
            },
            v => {
                self.wrong_type(&format!("{ptr}/{key}"), key, "a whole number", v);
                None
            }
        }
    }

    /// A line number, 1 to [`MAX_LINE`].
    pub fn line(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<u32> {
        let v = obj.get(key)?;
        let n = match v {
            Value::Null => return None,
            Value::Number(n) => n,
            v => {
                self.wrong_type(&format!("{ptr}/{key}"), key, "a line number", v);
                return None;
            }
        };
        match n.as_u64().filter(|&l| l >= 1 && l <= u64::from(MAX_LINE)) {
            Some(l) => Some(l as u32),
            None => {
                self.problem(
                    &format!("{ptr}/{key}"),
                    format!("`{key}` is `{n}`, expected a line number from 1 to {MAX_LINE}"),
                );
                None
            }
        }
    }

    /// A line range written as `[first, last]`, `first` alone, or `"43-45"`.
    pub fn lines(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<Lines> {
        let v = obj.get(key)?;
        let at = format!("{ptr}/{key}");
        let parsed = match v {
            Value::Null => return None,
            Value::Number(_) => {
                let l = self.line(obj, key, ptr)?;
                Lines::single(l)
            }
            Value::Array(items) if (1..=2).contains(&items.len()) => {
                let nums: Vec<Option<u64>> = items.iter().map(Value::as_u64).collect();
                match (
                    nums.first().copied().flatten(),
                    nums.last().copied().flatten(),
                ) {
                    (Some(a), Some(b)) if a <= u64::from(MAX_LINE) && b <= u64::from(MAX_LINE) => {
                        Lines::new(a as u32, b as u32)
                    }
                    _ => Err(format!("expected line numbers from 1 to {MAX_LINE}")),
                }
            }
            Value::String(text) => {
                let t = text.trim();
                let anchor = if t.starts_with('L') {
                    t.to_string()
                } else {
                    format!("L{t}")
                };
                super::url::parse_anchor(&anchor).ok_or_else(|| {
                    format!("expected `43`, `43-45` or `L43-L45`, lines from 1 to {MAX_LINE}")
                })
            }
            v => {
                self.wrong_type(&at, key, "`[first, last]` line numbers", v);
                return None;
            }
        };
        match parsed {
            Ok(l) => Some(l),
            Err(e) => {
                self.problem(&at, format!("`{key}` is `{}`: {e}", show(v)));
                None
            }
        }
    }

    /// A claimed value: a JSON number, kept with the digits as written.
    pub fn value(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<ClaimValue> {
        match obj.get(key)? {
            Value::Null => None,
            Value::Number(n) => {
                let parsed = ClaimValue::parse(&n.to_string());
                if parsed.is_none() {
                    self.problem(
                        &format!("{ptr}/{key}"),
                        format!("`{key}` `{n}` is not a finite number"),
                    );
                }
                parsed
            }
            v @ Value::String(s) => {
                let hint = if ClaimValue::parse(s).is_some() {
                    "; write it as a JSON number, without quotes"
                } else {
                    ""
                };
                self.problem(
                    &format!("{ptr}/{key}"),
                    format!(
                        "`{key}` is a string (`{}`), expected a number{hint}",
                        show(v)
                    ),
                );
                None
            }
            v => {
                self.wrong_type(&format!("{ptr}/{key}"), key, "a number", v);
                None
            }
        }
    }
}
