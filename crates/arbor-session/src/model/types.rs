//! Typed shapes of every entry and message in the format (session-format.md).
//!
//! The reader keeps entries as raw JSON so that nothing is ever lost; these
//! types are the checked view of them. Every struct keeps fields it does not
//! know in `extra`, so a typed round trip preserves the meaning of a line.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

type Extra = Map<String, Value>;

// Numbers are kept as `serde_json::Number`, not `f64`: an `f64` turns the
// integer `5` into `5.0` on the way back, so a typed round trip changed
// every usage figure and `tokensBefore` of the files it read.

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// For `Option<Option<T>>` fields: a present key (even `null`) is `Some`,
/// so that a missing key and an explicit `null` both survive a round trip.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Fields every entry has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryBase {
    pub id: String,
    pub parent_id: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    Text {
        text: String,
        #[serde(flatten)]
        extra: Extra,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
        #[serde(flatten)]
        extra: Extra,
    },
    Thinking {
        thinking: String,
        #[serde(flatten)]
        extra: Extra,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
        #[serde(flatten)]
        extra: Extra,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    pub input: Number,
    pub output: Number,
    pub cache_read: Number,
    pub cache_write: Number,
    pub total: Number,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: Number,
    pub output: Number,
    pub cache_read: Number,
    pub cache_write: Number,
    /// Missing in legacy (pi v1) usage records; `Some(None)` is an explicit null.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_tokens: Option<Option<Number>>,
    pub cost: Cost,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User {
        content: Content,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    Assistant {
        content: Vec<ContentBlock>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Box<Usage>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        content: Vec<ContentBlock>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    BashExecution {
        command: String,
        #[serde(default)]
        output: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    Custom {
        custom_type: String,
        content: Content,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    BranchSummary {
        summary: String,
        #[serde(flatten)]
        extra: Extra,
    },
    /// Historical role of older files (session-format.md); inert today.
    #[serde(rename_all = "camelCase")]
    CompactionSummary {
        summary: String,
        #[serde(flatten)]
        extra: Extra,
    },
}

/// A typed entry; anything that does not fit a known shape stays `Unknown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TypedEntry {
    Message {
        #[serde(flatten)]
        base: EntryBase,
        message: Box<Message>,
    },
    #[serde(rename_all = "camelCase")]
    ModelChange {
        #[serde(flatten)]
        base: EntryBase,
        provider: String,
        model_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ThinkingLevelChange {
        #[serde(flatten)]
        base: EntryBase,
        thinking_level: String,
    },
    #[serde(rename_all = "camelCase")]
    ContextWindowChange {
        #[serde(flatten)]
        base: EntryBase,
        context_window: u64,
    },
    #[serde(rename_all = "camelCase")]
    Compaction {
        #[serde(flatten)]
        base: EntryBase,
        summary: String,
        #[serde(default)]
        first_kept_entry_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_before: Option<Number>,
        #[serde(flatten)]
        extra: Extra,
    },
    ContextCompaction {
        #[serde(flatten)]
        base: EntryBase,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    BranchSummary {
        #[serde(flatten)]
        base: EntryBase,
        from_id: String,
        summary: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    Custom {
        #[serde(flatten)]
        base: EntryBase,
        custom_type: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    CustomMessage {
        #[serde(flatten)]
        base: EntryBase,
        custom_type: String,
        content: Content,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    Label {
        #[serde(flatten)]
        base: EntryBase,
        target_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    SessionInfo {
        #[serde(flatten)]
        base: EntryBase,
        name: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename_all = "camelCase")]
    SessionSummary {
        #[serde(flatten)]
        base: EntryBase,
        summary: String,
        summarized_through_id: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(skip)]
    Unknown(Map<String, Value>),
}

impl TypedEntry {
    /// The typed view of a raw entry; never fails.
    pub fn from_raw(raw: &Map<String, Value>) -> TypedEntry {
        serde_json::from_value(Value::Object(raw.clone()))
            .unwrap_or_else(|_| TypedEntry::Unknown(raw.clone()))
    }

    /// Back to JSON.
    pub fn to_raw(&self) -> Map<String, Value> {
        match self {
            TypedEntry::Unknown(m) => m.clone(),
            other => match serde_json::to_value(other) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            },
        }
    }
}
