//! Field readers that never give up on a whole record because of one bad field.
//!
//! A pin file written by hand, or a record document from a publisher, can have a
//! value written as a string or a line as `-3`. Rejecting the file would lose every
//! other claim in it; instead each reader returns `None` for the bad field and
//! notes a [`Problem`] that the caller turns into an `invalid-record` finding
//! naming the field by its JSON pointer.
//!
//! Two ways in, one set of rules ([`Form`]):
//! - [`Reader`] reads fields out of a JSON object by key (record documents);
//! - [`Field`], [`List`] and [`Unknown`] are serde types, so that a format can be
//!   declared as a plain `#[derive(Deserialize)]` struct (pin files) and still be
//!   read leniently: a field that is not of its form deserializes as
//!   [`Field::Invalid`] with the reason, never as an error, and keys the struct does
//!   not declare are collected by a `#[serde(flatten)]` [`Unknown`].

use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::{ClaimValue, Lines, MAX_LINE};

/// One unreadable field: where (a JSON pointer) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

/// Collects problems while fields are read.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    pub(crate) problems: Vec<Problem>,
    /// Keys a small edit away from a known one (`source_lne`): allowed, and
    /// named in a warning with the key they resemble.
    /// By the 1-based ```json block they are in (0: none).
    pub(crate) near_misses: Vec<(usize, Problem)>,
}

/// What a JSON value is, in words, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
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

/// A key as one reference token of a JSON pointer (RFC 6901: `~` is `~0`, `/` is `~1`).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The known key an unknown one was probably meant to be: a small edit away
/// (`revison`, `sha265`, `Revision`, `commit-time`), or a prefix of it or it of
/// the key (`line`, `rev`). `None` when nothing is close.
pub(crate) fn did_you_mean<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let key = key.trim().to_lowercase();
    let (distance, best) = known
        .iter()
        .map(|k| (strsim::osa_distance(&key, k), *k))
        .min_by_key(|(d, _)| *d)?;
    let longest = key.chars().count().max(best.chars().count());
    if distance <= (longest / 3).max(1) {
        return Some(best);
    }
    known.iter().copied().find(|k| {
        let (short, long) = if key.len() < k.len() {
            (key.as_str(), *k)
        } else {
            (*k, key.as_str())
        };
        short.len() >= 3 && long.starts_with(short)
    })
}

/// How one kind of field is read from whatever JSON a file holds.
pub(crate) trait Form: Sized {
    /// `Ok(None)` when nothing is said (null, a blank string); `Err` with the reason
    /// the value is unusable, worded to follow "`key` " (`is a string (…), expected…`).
    fn read(v: &Value) -> Result<Option<Self>, String>;
}

fn wrong_type(expected: &str, v: &Value) -> String {
    format!("is {} (`{}`), expected {expected}", kind(v), show(v))
}

/// A text field: trimmed; blank is nothing.
impl Form for String {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        match v {
            Value::Null => Ok(None),
            Value::String(s) if s.trim().is_empty() => Ok(None),
            Value::String(s) => Ok(Some(s.trim().to_string())),
            v => Err(wrong_type("a string", v)),
        }
    }
}

/// A label-like field (ids, labels): a string, or a number taken as its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct Text(pub String);

/// Described as a string: numbers are read, but not what a well-formed file holds.
impl JsonSchema for Text {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }
}

impl Form for Text {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        match v {
            Value::Number(n) => Ok(Some(Text(n.to_string()))),
            v => Ok(String::read(v)?.map(Text)),
        }
    }
}

/// A count (`correct`, `total`): a whole number of at least 0.
impl Form for u64 {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) => match n.as_u64() {
                Some(c) => Ok(Some(c)),
                None => Err(format!("is `{n}`, expected a whole number of at least 0")),
            },
            v => Err(wrong_type("a whole number", v)),
        }
    }
}

/// A line number, 1 to [`MAX_LINE`].
fn read_line(v: &Value) -> Result<Option<u32>, String> {
    let n = match v {
        Value::Null => return Ok(None),
        Value::Number(n) => n,
        v => return Err(wrong_type("a line number", v)),
    };
    match n.as_u64().filter(|&l| l >= 1 && l <= u64::from(MAX_LINE)) {
        Some(l) => Ok(Some(l as u32)),
        None => Err(format!(
            "is `{n}`, expected a line number from 1 to {MAX_LINE}"
        )),
    }
}

/// A line range written as `[first, last]`, `first` alone, or `"43-45"`.
impl Form for Lines {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        let parsed = match v {
            Value::Null => return Ok(None),
            Value::Number(_) => match read_line(v)? {
                Some(l) => Lines::single(l).map_err(|e| e.to_string()),
                None => return Ok(None),
            },
            Value::Array(items) if (1..=2).contains(&items.len()) => {
                let nums: Vec<Option<u64>> = items.iter().map(Value::as_u64).collect();
                match (
                    nums.first().copied().flatten(),
                    nums.last().copied().flatten(),
                ) {
                    (Some(a), Some(b)) if a <= u64::from(MAX_LINE) && b <= u64::from(MAX_LINE) => {
                        Lines::new(a as u32, b as u32).map_err(|e| e.to_string())
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
            v => return Err(wrong_type("`[first, last]` line numbers", v)),
        };
        parsed
            .map(Some)
            .map_err(|e| format!("is `{}`: {e}", show(v)))
    }
}

/// A claimed value: a JSON number, finite, kept with the digits as written
/// (serde_json's `arbitrary_precision`), so that `98.0` stays `98.0`.
impl Form for Number {
    fn read(v: &Value) -> Result<Option<Self>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Number(n) if ClaimValue::parse(&n.to_string()).is_some() => Ok(Some(n.clone())),
            Value::Number(n) => Err(format!("`{n}` is not a finite number")),
            Value::String(s) => {
                let hint = if ClaimValue::parse(s).is_some() {
                    "; write it as a JSON number, without quotes"
                } else {
                    ""
                };
                Err(format!(
                    "is a string (`{}`), expected a number{hint}",
                    show(v)
                ))
            }
            v => Err(wrong_type("a number", v)),
        }
    }
}

impl Reader {
    /// Notes each key of `obj` (at `ptr`) that is not one of `known` but is a
    /// small edit away from one: probably a typo, so the field it meant was
    /// not read. Keys like no known one are the record's own and stay quiet.
    pub(crate) fn near_misses(
        &mut self,
        block: usize,
        obj: &Map<String, Value>,
        ptr: &str,
        known: &[&str],
    ) {
        for key in obj.keys() {
            if known.contains(&key.as_str()) {
                continue;
            }
            let near = known
                .iter()
                .copied()
                .filter(|k| {
                    strsim::osa_distance(&key.to_lowercase(), k) <= 2.min(k.len() / 4).max(1)
                })
                .min_by_key(|k| strsim::osa_distance(&key.to_lowercase(), k));
            if let Some(near) = near {
                let problem = Problem {
                    pointer: format!("{ptr}/{}", pointer_token(key)),
                    message: format!("unknown key `{key}`, not read; did you mean `{near}`?"),
                };
                self.near_misses.push((block, problem));
            }
        }
    }

    pub(crate) fn problem(&mut self, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            pointer: pointer.to_string(),
            message: message.into(),
        });
    }

    /// What was read of a field `key` of the object at `ptr`; an unusable value is
    /// noted as a problem at `{ptr}/{key}`, and is `None`.
    pub(crate) fn take<T>(&mut self, field: Field<T>, ptr: &str, key: &str) -> Option<T> {
        match field {
            Field::Missing => None,
            Field::Valid(v) => Some(v),
            Field::Invalid(why) => {
                self.problem(&format!("{ptr}/{key}"), format!("`{key}` {why}"));
                None
            }
        }
    }

    /// Notes each key of the object at `ptr` that its format does not have.
    /// `what` names the object in the message (`a source`).
    pub(crate) fn unknown(&mut self, unknown: &Unknown, ptr: &str, known: &[&str], what: &str) {
        for key in &unknown.0 {
            let hint = match did_you_mean(key, known) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!(
                    "{what} has {}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            self.problem(
                &format!("{ptr}/{}", pointer_token(key)),
                format!("unknown key `{key}`, not read; {hint}"),
            );
        }
    }

    /// Reads the field `key` of `obj` in the form `T`; absent is `None`.
    pub(crate) fn field<T: Form>(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        ptr: &str,
    ) -> Option<T> {
        let field = Field::from_json(obj.get(key)?);
        self.take(field, ptr, key)
    }

    /// A text field; absent or null is `None`.
    pub(crate) fn string(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        ptr: &str,
    ) -> Option<String> {
        self.field(obj, key, ptr)
    }

    /// A label-like field: strings, and numbers taken as their text.
    pub(crate) fn text(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        ptr: &str,
    ) -> Option<String> {
        self.field::<Text>(obj, key, ptr).map(|t| t.0)
    }

    /// A non-negative whole number (counts such as `correct` and `total`).
    pub(crate) fn count(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<u64> {
        self.field(obj, key, ptr)
    }

    /// A line number, 1 to [`MAX_LINE`].
    pub(crate) fn line(&mut self, obj: &Map<String, Value>, key: &str, ptr: &str) -> Option<u32> {
        let field = match read_line(obj.get(key)?) {
            Ok(l) => l.map_or(Field::Missing, Field::Valid),
            Err(why) => Field::Invalid(why),
        };
        self.take(field, ptr, key)
    }

    /// A line range written as `[first, last]`, `first` alone, or `"43-45"`.
    #[cfg(test)]
    pub(crate) fn lines(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        ptr: &str,
    ) -> Option<Lines> {
        self.field(obj, key, ptr)
    }

    /// A claimed value: a JSON number, kept with the digits as written.
    pub(crate) fn value(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        ptr: &str,
    ) -> Option<ClaimValue> {
        self.field::<Number>(obj, key, ptr)
            .and_then(|n| ClaimValue::parse(&n.to_string()))
    }
}

/// One field of a format, as written: nothing (absent, null, blank), a value of its
/// [`Form`], or something else, kept as the reason it cannot be used.
///
/// Deserializing never fails; serializing writes the value, or `null`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Field<T> {
    #[default]
    Missing,
    Valid(T),
    /// Why the value is unusable, worded to follow "`key` ".
    Invalid(String),
}

impl<T: Form> Field<T> {
    pub(crate) fn from_json(v: &Value) -> Field<T> {
        match T::read(v) {
            Ok(Some(x)) => Field::Valid(x),
            Ok(None) => Field::Missing,
            Err(why) => Field::Invalid(why),
        }
    }
}

impl<T> From<Option<T>> for Field<T> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Field::Missing, Field::Valid)
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Valid(v) => v.serialize(s),
            Field::Missing | Field::Invalid(_) => s.serialize_none(),
        }
    }
}

impl<'de, T: Form> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // `Option` so that an absent key (serde's "missing field") is `Missing` too.
        Ok(match Option::<Value>::deserialize(d)? {
            None => Field::Missing,
            Some(v) => Field::from_json(&v),
        })
    }
}

/// Described as `T` or null.
impl<T: JsonSchema> JsonSchema for Field<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        Option::<T>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Option::<T>::json_schema(generator)
    }
}

/// A list of objects, as written: each entry read as `T`, or why it was skipped
/// (worded to stand alone: `is a string, expected an object; skipped`); or, when
/// the field is not a list at all, why (worded to follow "`key` ").
///
/// Absent and null are the empty list. Deserializing never fails.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum List<T> {
    Entries(Vec<Result<T, String>>),
    Invalid(String),
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List::Entries(Vec::new())
    }
}

impl<T> List<T> {
    /// Whether the list holds no readable entry (what is written for it).
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            List::Entries(entries) => !entries.iter().any(Result::is_ok),
            List::Invalid(_) => true,
        }
    }
}

impl<T> FromIterator<T> for List<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        List::Entries(items.into_iter().map(Ok).collect())
    }
}

impl<T: Serialize> Serialize for List<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let items: Vec<&T> = match self {
            List::Entries(entries) => entries.iter().filter_map(|e| e.as_ref().ok()).collect(),
            List::Invalid(_) => Vec::new(),
        };
        let mut seq = s.serialize_seq(Some(items.len()))?;
        for item in items {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for List<T> {
    /// Read in place: each entry is deserialized from the list where it stands,
    /// never copied out as a JSON value first (reading a pin file from its
    /// parsed value copied every list whole, a sixth of re-reading 2,000 of them).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_option(ListVisitor(PhantomData))
    }
}

/// What is not a list, named as [`kind`] names it.
fn not_a_list<T>(kind: &str) -> List<T> {
    List::Invalid(format!("is {kind}, expected an array"))
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_none<E>(self) -> Result<List<T>, E> {
        Ok(List::default())
    }

    fn visit_unit<E>(self) -> Result<List<T>, E> {
        Ok(List::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<List<T>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E>(self, _: bool) -> Result<List<T>, E> {
        Ok(not_a_list("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<List<T>, E> {
        Ok(not_a_list("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<List<T>, E> {
        Ok(not_a_list("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<List<T>, E> {
        Ok(not_a_list("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<List<T>, E> {
        Ok(not_a_list("a string"))
    }

    fn visit_u128<E>(self, _: u128) -> Result<List<T>, E> {
        Ok(not_a_list("a number"))
    }

    fn visit_i128<E>(self, _: i128) -> Result<List<T>, E> {
        Ok(not_a_list("a number"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List<T>, A::Error> {
        // serde_json hands over a number no primitive holds as a map of one
        // private key.
        let first = map.next_key::<String>()?;
        let kind = match first.as_deref() {
            Some(NUMBER_TOKEN) => "a number",
            _ => "an object",
        };
        if first.is_some() {
            map.next_value::<IgnoredAny>()?;
        }
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(not_a_list(kind))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(EntrySeed::<T>(PhantomData))? {
            items.push(item);
        }
        Ok(List::Entries(items))
    }
}

/// The key of the one-entry map serde_json (`arbitrary_precision`) makes of a
/// number no primitive holds.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A map whose first key was already read: that key, then the rest.
struct Replay<A> {
    first: Option<String>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.first.take() {
            Some(key) => {
                use serde::de::IntoDeserializer;
                seed.deserialize(key.into_deserializer()).map(Some)
            }
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// One entry of a [`List`]: an object read as `T`, else why it is skipped.
struct EntrySeed<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> serde::de::DeserializeSeed<'de> for EntrySeed<T> {
    type Value = Result<T, String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(EntryVisitor::<T>(PhantomData))
    }
}

struct EntryVisitor<T>(PhantomData<T>);

/// What is not an object, named as [`kind`] names it.
fn skipped<T>(kind: &str) -> Result<T, String> {
    Err(format!("is {kind}, expected an object; skipped"))
}

impl<'de, T: DeserializeOwned> Visitor<'de> for EntryVisitor<T> {
    type Value = Result<T, String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // The first key says whether this is serde_json's form of a number no
        // primitive holds; otherwise it is given back to the entry's reader.
        let first = map.next_key::<String>()?;
        if first.as_deref() == Some(NUMBER_TOKEN) {
            map.next_value::<IgnoredAny>()?;
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(skipped("a number"));
        }
        let mut replay = Replay { first, map };
        match T::deserialize(serde::de::value::MapAccessDeserializer::new(&mut replay)) {
            Ok(item) => Ok(Ok(item)),
            Err(e) => {
                // What the entry's reader left unread, read past.
                while replay.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Err(format!("cannot be read ({e}); skipped")))
            }
        }
    }

    fn visit_u128<E>(self, _: u128) -> Result<Self::Value, E> {
        Ok(skipped("a number"))
    }

    fn visit_i128<E>(self, _: i128) -> Result<Self::Value, E> {
        Ok(skipped("a number"))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(skipped("null"))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(skipped("null"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(skipped("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(skipped("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(skipped("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(skipped("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(skipped("a string"))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(skipped("an array"))
    }
}

/// Described as an array of `T`.
impl<T: JsonSchema> JsonSchema for List<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        Vec::<T>::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Vec::<T>::json_schema(generator)
    }
}

/// The keys of an object that its format does not declare, in the order written:
/// a `#[serde(flatten)]` field collects them. Their values are not read. Written
/// as nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Unknown(pub Vec<String>);

impl Serialize for Unknown {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for Unknown {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys(PhantomData<Unknown>);
        impl<'de> Visitor<'de> for Keys {
            type Value = Unknown;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unknown, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Unknown(keys))
            }
        }
        d.deserialize_map(Keys(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_near_keys() {
        let source = [
            "id",
            "url",
            "repository",
            "revision",
            "path",
            "sha256",
            "commit_time",
        ];
        let claim = ["label", "source", "lines", "value", "correct", "total"];
        assert_eq!(did_you_mean("revison", &source), Some("revision"));
        assert_eq!(did_you_mean("sha265", &source), Some("sha256"));
        assert_eq!(did_you_mean("Revision", &source), Some("revision"));
        assert_eq!(did_you_mean("commit-time", &source), Some("commit_time"));
        assert_eq!(did_you_mean("sha", &source), Some("sha256"));
        assert_eq!(did_you_mean("line", &claim), Some("lines"));
        assert_eq!(did_you_mean("vaule", &claim), Some("value"));
        assert_eq!(did_you_mean("notes", &claim), None);
        assert_eq!(did_you_mean("hash", &source), None);
        assert_eq!(did_you_mean("", &source), None);
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }

    #[test]
    fn fields_deserialize_leniently() {
        #[derive(Deserialize)]
        struct S {
            a: Field<u64>,
            b: Field<Text>,
            #[serde(default)]
            c: List<S2>,
            #[serde(flatten)]
            rest: Unknown,
        }
        #[derive(Deserialize, Debug, PartialEq)]
        struct S2 {
            x: Field<String>,
        }
        let s: S = serde_json::from_str(r#"{"a": -1, "zz": {"q": 1.50}, "c": [{"x": " y "}, 3]}"#)
            .unwrap();
        assert!(
            matches!(&s.a, Field::Invalid(w) if w.contains("at least 0")),
            "{:?}",
            s.a
        );
        assert_eq!(s.b, Field::Missing);
        assert_eq!(s.rest, Unknown(vec!["zz".into()]));
        let List::Entries(c) = s.c else {
            panic!("a list")
        };
        assert_eq!(
            c[0],
            Ok(S2 {
                x: Field::Valid("y".into())
            })
        );
        assert_eq!(c[1], Err("is a number, expected an object; skipped".into()));
    }

    /// A list reads the same from a parsed value (as pin files are read) and
    /// through a `#[serde(flatten)]` struct: every kind of entry and of
    /// non-list (numbers no primitive holds too), an absent key and null.
    #[test]
    fn lists_read_in_place_say_what_each_entry_is() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct E {
            a: u32,
        }
        #[derive(Deserialize, Debug)]
        struct W {
            items: List<E>,
        }
        #[derive(Deserialize, Debug)]
        struct F {
            items: List<E>,
            #[serde(flatten)]
            rest: Unknown,
        }
        let cases: &[(&str, List<E>)] = &[
            (r#"{}"#, List::default()),
            (r#"{"items": null}"#, List::default()),
            (r#"{"items": []}"#, List::default()),
            (
                r#"{"items": 3}"#,
                List::Invalid("is a number, expected an array".into()),
            ),
            (
                r#"{"items": "x"}"#,
                List::Invalid("is a string, expected an array".into()),
            ),
            (
                r#"{"items": 1e400}"#,
                List::Invalid("is a number, expected an array".into()),
            ),
            (
                r#"{"items": [99999999999999999999, -99999999999999999999, 1e400, 0.10000000000000000000001]}"#,
                List::Entries(vec![
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a number, expected an object; skipped".into()),
                ]),
            ),
            (
                r#"{"items": true}"#,
                List::Invalid("is a boolean, expected an array".into()),
            ),
            (
                r#"{"items": {"a": 1}}"#,
                List::Invalid("is an object, expected an array".into()),
            ),
            (
                r#"{"items": [1, -2, 0.5, "a", null, true, [1, [2]], {"a": 1}, {"a": "no"}, {"b": 2}, {"a": 7, "z": [1]}]}"#,
                List::Entries(vec![
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a number, expected an object; skipped".into()),
                    Err("is a string, expected an object; skipped".into()),
                    Err("is null, expected an object; skipped".into()),
                    Err("is a boolean, expected an object; skipped".into()),
                    Err("is an array, expected an object; skipped".into()),
                    Ok(E { a: 1 }),
                    Err(
                        "cannot be read (invalid type: string \"no\", expected u32); skipped"
                            .into(),
                    ),
                    Err("cannot be read (missing field `a`); skipped".into()),
                    Ok(E { a: 7 }),
                ]),
            ),
        ];
        for (text, want) in cases {
            let value: Value = serde_json::from_str(text).unwrap();
            let from_value = W::deserialize(&value).unwrap().items;
            assert_eq!(&from_value, want, "{text} from a value");
            let flattened = F::deserialize(&value).unwrap();
            assert_eq!(&flattened.items, want, "{text} through flatten");
            assert!(flattened.rest.0.is_empty(), "{text}");
        }
    }
}
