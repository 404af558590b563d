//! The serde views an entry's searchable text is read through, from a
//! parsed entry or a raw line alike: every field tolerant of any type.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::Part;

#[derive(Deserialize, Default)]
pub(super) struct EntryView<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    message: Lenient<MessageView<'a>>,
    #[serde(borrow, default)]
    summary: Str<'a>,
    #[serde(borrow, default)]
    content: Content<'a>,
}

#[derive(Deserialize, Default)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Content<'a>,
    #[serde(borrow, default)]
    command: Str<'a>,
    #[serde(borrow, default)]
    output: Str<'a>,
    #[serde(borrow, default)]
    summary: Str<'a>,
}

#[derive(Deserialize, Default)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
    #[serde(borrow, default)]
    thinking: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(default)]
    arguments: ArgText,
}

impl EntryView<'_> {
    pub(super) fn parts(&self, f: &mut dyn FnMut(Part, &str)) {
        let mut emit = |p: Part, s: &str| {
            if !s.is_empty() {
                f(p, s)
            }
        };
        match self.ty.get() {
            Some("message") => {
                let Some(m) = &self.message.0 else { return };
                match m.role.get() {
                    Some("user") => emit(Part::User, &m.content.text()),
                    Some("assistant") => {
                        // Text blocks first, as one part (the index keeps
                        // them so), then the others in order.
                        emit(Part::Assistant, &m.content.text());
                        if let Content::Blocks(bs) = &m.content {
                            for b in bs.iter().flatten() {
                                match b.ty.get() {
                                    Some("thinking") => {
                                        emit(Part::Thinking, b.thinking.get().unwrap_or(""))
                                    }
                                    Some("toolCall") => {
                                        let name = b.name.get().unwrap_or("");
                                        let args = b.arguments.0.as_str();
                                        if args.is_empty() {
                                            emit(Part::ToolCall, name);
                                        } else {
                                            emit(Part::ToolCall, &format!("{name} {args}"));
                                        }
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                    Some("toolResult") => emit(Part::ToolOutput, &m.content.text()),
                    Some("bashExecution") => {
                        emit(Part::ToolCall, m.command.get().unwrap_or(""));
                        emit(Part::ToolOutput, m.output.get().unwrap_or(""));
                    }
                    // `hookMessage` is what the reader migrates to `custom`.
                    Some("custom" | "hookMessage") => emit(Part::Other, &m.content.text()),
                    Some("branchSummary" | "compactionSummary") => {
                        emit(Part::Other, m.summary.get().unwrap_or(""))
                    }
                    _ => {}
                }
            }
            Some("custom_message") => emit(Part::Other, &self.content.text()),
            Some("branch_summary" | "compaction") => {
                emit(Part::Other, self.summary.get().unwrap_or(""))
            }
            _ => {}
        }
    }
}

/// A string, or nothing when the value is of another type.
#[derive(Default)]
struct Str<'a>(Option<Cow<'a, str>>);

impl Str<'_> {
    fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// Drains a value of a type that is not wanted.
fn ignore_seq<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn ignore_map<'de, A: MapAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_seq(a).map(|_| Str(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_map(a).map(|_| Str(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// `T` when the value is an object, else nothing.
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(a)).map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_seq(a).map(|_| Lenient(None))
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A `content` value: a string, or blocks (non-objects among them are
/// nothing), or nothing.
#[derive(Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Option<BlockView<'a>>>),
}

impl Content<'_> {
    /// The text: the string, or the text blocks joined by a space (as the
    /// list row and the index gather it).
    fn text(&self) -> Cow<'_, str> {
        match self {
            Content::None => Cow::Borrowed(""),
            Content::Text(t) => Cow::Borrowed(t),
            Content::Blocks(bs) => {
                let mut texts = bs
                    .iter()
                    .flatten()
                    .filter(|b| b.ty.get() == Some("text"))
                    .filter_map(|b| b.text.get());
                let Some(first) = texts.next() else {
                    return Cow::Borrowed("");
                };
                let Some(second) = texts.next() else {
                    return Cow::Borrowed(first);
                };
                let mut out = format!("{first} {second}");
                for t in texts {
                    out.push(' ');
                    out.push_str(t);
                }
                Cow::Owned(out)
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element::<Lenient<BlockView<'de>>>()? {
                    out.push(b.0);
                }
                Ok(Content::Blocks(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_map(a).map(|_| Content::None)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V)
    }
}

/// The values of a tool call's arguments (strings and numbers, nested ones
/// included, keys left out), separated by spaces: command lines, paths,
/// patterns.
#[derive(Default)]
pub(super) struct ArgText(String);

impl<'de> Deserialize<'de> for ArgText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = String::new();
        Collect(&mut out).deserialize(d)?;
        Ok(ArgText(out))
    }
}

pub(super) struct Collect<'s>(pub(super) &'s mut String);

impl Collect<'_> {
    fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push_str(s);
    }
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E>(mut self, v: &str) -> Result<(), E> {
        self.push(v);
        Ok(())
    }
    fn visit_i64<E>(mut self, v: i64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_u64<E>(mut self, v: u64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_f64<E>(mut self, v: f64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element_seed(Collect(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_key::<IgnoredAny>()?.is_some() {
            a.next_value_seed(Collect(&mut *self.0))?;
        }
        Ok(())
    }
}
