//! The row of `arbor list --json`, written by hand as `serde_json` would
//! write it (the listing writes thousands of them).

use crate::reader::Diagnostics;

/// Writing JSON values as `serde_json` writes them (compact).
pub(super) mod json {
    /// `s` as a JSON string: `"` and `\` escaped, controls as `\b \t \n
    /// \f \r` or `\u00XX` (lowercase hex), everything else as is.
    pub fn str(out: &mut Vec<u8>, s: &str) {
        let b = s.as_bytes();
        out.reserve(b.len() + 2);
        out.push(b'"');
        let mut start = 0;
        let mut i = 0;
        // 16 bytes at a time where SSE2 is had (x86-64 always has it):
        // 8 bytes at a time cost a tenth of a 100,000-row listing.
        #[cfg(target_arch = "x86_64")]
        while i + 16 <= b.len() {
            let mut m = crate::jsonscan::classify16(b, i);
            while m != 0 {
                let k = i + m.trailing_zeros() as usize;
                out.extend_from_slice(&b[start..k]);
                escape(out, b[k]);
                start = k + 1;
                m &= m - 1;
            }
            i += 16;
        }
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // Whether a byte of `w` is below 0x20, a quote or a backslash.
        let special = |w: u64| {
            let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
            (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
                | zero(w ^ (ONES * b'"' as u64))
                | zero(w ^ (ONES * b'\\' as u64))
        };
        while i < b.len() {
            if i + 8 <= b.len() {
                let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
                if special(w) == 0 {
                    i += 8;
                    continue;
                }
            }
            let c = b[i];
            if c < 0x20 || c == b'"' || c == b'\\' {
                out.extend_from_slice(&b[start..i]);
                escape(out, c);
                start = i + 1;
            }
            i += 1;
        }
        out.extend_from_slice(&b[start..]);
        out.push(b'"');
    }

    /// One byte that needs escaping: a quote, a backslash or a control.
    fn escape(out: &mut Vec<u8>, c: u8) {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
                return;
            }
        };
        out.extend_from_slice(esc);
    }

    pub fn opt_str(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => str(out, s),
            None => out.extend_from_slice(b"null"),
        }
    }

    pub fn bool(out: &mut Vec<u8>, b: bool) {
        out.extend_from_slice(if b { b"true" } else { b"false" });
    }

    pub fn uint(out: &mut Vec<u8>, n: u64) {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut n = n;
        loop {
            at -= 1;
            buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[at..]);
    }
}

/// The row of `arbor list --json`, in its field order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonRow<'a> {
    pub path: std::borrow::Cow<'a, str>,
    pub id: &'a str,
    pub cwd: &'a str,
    pub name: Option<&'a str>,
    pub has_name: bool,
    pub created: &'a str,
    pub modified: String,
    pub message_count: usize,
    pub first_message: &'a str,
    pub parent_session_path: Option<&'a str>,
    pub summary: Option<&'a str>,
    pub last_reply: Option<&'a str>,
    pub internal: bool,
    pub agent: &'a str,
    /// The git branch the agent recorded (`null` when none: Atomic and pi
    /// do not record one).
    pub git_branch: Option<&'a str>,
    /// Only when lines were skipped or read lossily.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<JsonDiagnostics>,
}

impl JsonRow<'_> {
    /// Appends this as an `arbor list --json` line, with its `\n`.
    ///
    /// Written by hand, byte for byte what `serde_json` writes for
    /// [`JsonRow`] (a test checks it): at 100,000 sessions
    /// serde_json's per-byte string escaping was a quarter of a warm
    /// `arbor list --all --json`'s CPU; this one crosses text 8 bytes at a
    /// time.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        let r = self;
        out.extend_from_slice(b"{\"path\":");
        json::str(out, &r.path);
        out.extend_from_slice(b",\"id\":");
        json::str(out, r.id);
        out.extend_from_slice(b",\"cwd\":");
        json::str(out, r.cwd);
        out.extend_from_slice(b",\"name\":");
        json::opt_str(out, r.name);
        out.extend_from_slice(b",\"hasName\":");
        json::bool(out, r.has_name);
        out.extend_from_slice(b",\"created\":");
        json::str(out, r.created);
        out.extend_from_slice(b",\"modified\":");
        json::str(out, &r.modified);
        out.extend_from_slice(b",\"messageCount\":");
        json::uint(out, r.message_count as u64);
        out.extend_from_slice(b",\"firstMessage\":");
        json::str(out, r.first_message);
        out.extend_from_slice(b",\"parentSessionPath\":");
        json::opt_str(out, r.parent_session_path);
        out.extend_from_slice(b",\"summary\":");
        json::opt_str(out, r.summary);
        out.extend_from_slice(b",\"lastReply\":");
        json::opt_str(out, r.last_reply);
        out.extend_from_slice(b",\"internal\":");
        json::bool(out, r.internal);
        out.extend_from_slice(b",\"agent\":");
        json::str(out, r.agent);
        out.extend_from_slice(b",\"gitBranch\":");
        json::opt_str(out, r.git_branch);
        if let Some(d) = &r.diagnostics {
            out.extend_from_slice(b",\"diagnostics\":{\"skippedLines\":");
            json::uint(out, d.skipped_lines as u64);
            out.extend_from_slice(b",\"lossyLines\":");
            json::uint(out, d.lossy_lines as u64);
            out.extend_from_slice(b",\"partialTail\":");
            json::bool(out, d.partial_tail);
            out.push(b'}');
        }
        out.extend_from_slice(b"}\n");
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDiagnostics {
    pub skipped_lines: usize,
    pub lossy_lines: usize,
    pub partial_tail: bool,
}

impl JsonDiagnostics {
    /// What a row says of its reading: only when lines were skipped or
    /// read lossily.
    pub fn of(d: &Diagnostics) -> Option<JsonDiagnostics> {
        let skipped = d.skipped();
        (skipped > 0 || d.lossy_lines > 0).then_some(JsonDiagnostics {
            skipped_lines: skipped,
            lossy_lines: d.lossy_lines,
            partial_tail: d.partial_tail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::SessionInfo;
    use std::path::PathBuf;

    proptest::proptest! {
        /// The hand-written `list --json` line is serde_json's, byte for byte.
        #[test]
        fn json_line_is_serde_jsons(
            text in "(\\PC|[\\x00-\\x1f\"\\\\\\x7f]|\\u{85}|é|数){0,80}",
            name in proptest::option::of("(\\PC|[\\x00-\\x1f\"\\\\]){0,12}"),
            count in 0usize..100_000_000,
            skipped in 0usize..3,
            flags in 0u8..8,
        ) {
            let info = SessionInfo {
                path: PathBuf::from(format!("/s/{text}.jsonl")).into(),
                id: text.chars().rev().collect(),
                cwd: text.clone(),
                name: name.clone(),
                has_name: flags & 1 != 0,
                created: "2026-01-01T00:00:00.000Z".into(),
                modified_ms: count as i64 * 1000,
                message_count: count,
                first_message: (flags & 2 != 0).then(|| text.clone()),
                parent_session_path: name.clone(),
                git_branch: name.as_ref().map(|n| format!("{n}/{text}")),
                last_reply: (flags & 4 != 0).then(|| format!("{text}\\{text}")),
                summary_candidate: Some((text.clone(), "m".into())),
                last_message_id: Some("m".into()),
                internal: flags & 2 != 0,
                diagnostics: crate::reader::Diagnostics {
                    lossy_lines: skipped,
                    skipped_lines: skipped / 2,
                    partial_tail: flags & 4 != 0,
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut want = serde_json::to_vec(&info.json_row()).unwrap();
            want.push(b'\n');
            let mut got = Vec::new();
            info.write_json_line(&mut got);
            proptest::prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
    }

    #[test]
    fn json_lines_in_field_order() {
        let mut rows = vec![SessionInfo::default()];
        let mut r = SessionInfo {
            path: PathBuf::from("/a/\"b\"\n.jsonl").into(),
            id: "x\u{1}".into(),
            cwd: "C:\\Users".into(),
            name: Some("n ✓".into()),
            has_name: true,
            created: "2026".into(),
            modified_ms: 1_767_225_600_123,
            message_count: 12,
            first_message: Some("hi\t\"there\"".into()),
            parent_session_path: Some("/p".into()),
            summary_candidate: Some(("sum".into(), "m1".into())),
            last_message_id: Some("m1".into()),
            last_reply: Some("Fixed \"it\".".into()),
            internal: true,
            ..Default::default()
        };
        rows.push(r.clone());
        r.diagnostics.skipped_lines = 2;
        r.diagnostics.partial_tail = true;
        rows.push(r.clone());
        r.diagnostics = Diagnostics {
            lossy_lines: 1,
            ..Default::default()
        };
        r.modified_ms = -62_200_000_000_000;
        rows.push(r);
        let mut out = Vec::new();
        for r in rows {
            r.write_json_line(&mut out);
        }
        // serde_json's escapes; the diagnostics only when there are some.
        let want = [
            r#"{"path":"","id":"","cwd":"","name":null,"hasName":false,"created":"","modified":"1970-01-01T00:00:00.000Z","messageCount":0,"firstMessage":"(no messages)","parentSessionPath":null,"summary":null,"lastReply":null,"internal":false,"agent":"atomic","gitBranch":null}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"2026-01-01T00:00:00.123Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"2026-01-01T00:00:00.123Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null,"diagnostics":{"skippedLines":3,"lossyLines":0,"partialTail":true}}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"-0002-12-17T14:13:20.000Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null,"diagnostics":{"skippedLines":0,"lossyLines":1,"partialTail":false}}"#,
        ];
        assert_eq!(String::from_utf8(out).unwrap(), want.join("\n") + "\n");
    }
}
