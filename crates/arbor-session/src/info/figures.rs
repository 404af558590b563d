//! The token and cost figures of a `usage` object.

use crate::extras::UsageFigures;

use super::probe::{UsageParts, UsageProbe};

/// The figures of a `usage` object (each `None` when absent or null).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Figures {
    pub(super) total_tokens: Option<f64>,
    pub(super) cost: Option<f64>,
    pub(super) input: Option<f64>,
    pub(super) output: Option<f64>,
    pub(super) cache_read: Option<f64>,
    pub(super) cache_write: Option<f64>,
}

impl Figures {
    fn of(p: UsageProbe) -> Figures {
        Figures {
            total_tokens: p.total_tokens,
            cost: p.cost.and_then(|c| c.total),
            input: p.input,
            output: p.output,
            cache_read: p.cache_read,
            cache_write: p.cache_write,
        }
    }

    /// Token counts and cost as summed: negative or absent values count 0.
    pub(super) fn summed(&self) -> UsageFigures {
        let n = |v: Option<f64>| v.unwrap_or(0.0).max(0.0) as u64;
        UsageFigures {
            input: n(self.input),
            output: n(self.output),
            cache_read: n(self.cache_read),
            cache_write: n(self.cache_write),
            cost: self.cost.unwrap_or(0.0).max(0.0),
        }
    }
}

/// The figures of `usage`, exactly as deserializing [`UsageProbe`] gives
/// them (`None` when that fails: the usage is then ignored). The common
/// shape (numbers in objects) was captured by the skimmer into `parts`;
/// anything else goes through `serde_json`.
pub(super) fn usage_figures(u: &str, parts: Option<UsageParts>) -> Option<Figures> {
    let serde = || serde_json::from_str::<UsageProbe>(u).ok().map(Figures::of);
    let number = |v: Option<&str>| -> Result<Option<f64>, ()> {
        match v {
            None | Some("null") => Ok(None),
            // Token counts: a plain integer (the skimmer checked the JSON
            // grammar) is what serde makes of it, `u64 as f64`, without
            // its per-call setup (six numbers a message).
            Some(s) if s.len() <= 15 && s.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(
                s.bytes().fold(0u64, |v, b| v * 10 + u64::from(b - b'0')) as f64,
            )),
            Some(s) if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                serde_json::from_str::<f64>(s).map(Some).map_err(|_| ())
            }
            Some(_) => Err(()),
        }
    };
    // Lines the fast path refused are unusual: serde reads their usage.
    let Some(parts) = parts else {
        return serde();
    };
    let (Ok(total_tokens), Ok(input), Ok(output), Ok(cache_read), Ok(cache_write)) = (
        number(parts.total_tokens),
        number(parts.input),
        number(parts.output),
        number(parts.cache_read),
        number(parts.cache_write),
    ) else {
        return serde();
    };
    let cost = match parts.cost {
        None | Some("null") => None,
        Some(c) if c.starts_with('{') => match number(parts.cost_total) {
            Ok(v) => v,
            Err(()) => return serde(),
        },
        Some(_) => return serde(),
    };
    Some(Figures {
        total_tokens,
        cost,
        input,
        output,
        cache_read,
        cache_write,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::probe::probe_fast;
    use crate::info::scan::{scan_info_bytes, scan_info_bytes_reference};

    #[test]
    fn usage_figures_are_serdes() {
        let cases = [
            r#"{"input":1,"totalTokens":64197,"cost":{"input":0.1,"total":0.009104624999999998}}"#,
            r#"{"totalTokens":null,"cost":null}"#,
            r#"{"totalTokens":"12","cost":{"total":1}}"#,
            r#"{"totalTokens":12,"cost":5}"#,
            r#"{"totalTokens":12,"cost":{"total":"x"}}"#,
            r#"{"totalTokens":12,"totalTokens":13}"#,
            r#"{"cost":{"total":1,"total":2}}"#,
            r#"{"totalTokens":1e400}"#,
            r#"{"totalTokens":-5,"cost":{"total":-1.5e-3}}"#,
            r#"{"totalTokens":12,"cost":{"nested":{"total":9}}}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[1,{"total":2}]"#,
            r#"null"#,
            r#"7"#,
            r#"{"totalTokens":true}"#,
            r#"{"totalTokens":[1]}"#,
            r#"{"totalTokens":3}"#,
            r#"{"total\u0054okens":5,"cost":{"total":2}}"#,
            r#"{"totalTokens":4,"cost":{"tot\u0061l":2}}"#,
            r#" { "totalTokens" : 6 , "cost" : { "total" : 0.5 } } "#,
            r#"{"totalTokens":7,"cost":{"total":1},"cost":{"total":2}}"#,
            r#""12""#,
            r#"{"input":3,"output":4.5,"cacheRead":-2,"cacheWrite":null,"totalTokens":9}"#,
            r#"{"input":"3","output":4}"#,
            r#"{"input":1,"input":2}"#,
            r#"{"cacheRead":1e400,"cacheWrite":7,"cost":{"total":0.5}}"#,
        ];
        let mut captured = 0;
        for u in cases {
            let want = serde_json::from_str::<UsageProbe>(u).ok().map(Figures::of);
            // The same usage inside a file: the fast path (which captures
            // usage member by member, or refuses the line) gives the serde
            // path's totals.
            let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#;
            let message = format!(
                r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"assistant","content":[],"usage":{u}}}}}"#
            );
            let file = format!("{header}\n{message}\n");
            let path = std::path::Path::new("/x/s.jsonl");
            let fast = scan_info_bytes(path, file.as_bytes(), 0).unwrap();
            let reference = scan_info_bytes_reference(path, file.as_bytes(), 0).unwrap();
            assert_eq!(fast.message_count, 1, "{u}");
            // The members captured in the one pass give serde's figures.
            if let Some(m) = probe_fast(message.as_bytes()).and_then(|f| f.message) {
                if m.usage_parts.is_some() {
                    assert_eq!(usage_figures(m.usage.unwrap(), m.usage_parts), want, "{u}");
                    captured += 1;
                }
            }
            assert_eq!(
                (fast.total_tokens, fast.total_cost.to_bits()),
                (reference.total_tokens, reference.total_cost.to_bits()),
                "{u}"
            );
            assert_eq!(fast.usage, reference.usage, "{u}");
            let b = &fast.usage.buckets;
            assert_eq!(b.len(), 1, "one assistant message, one bucket: {u}");
            assert_eq!(b[0].messages, 1);
        }
        // Every object without duplicated or escaped keys (16 of the
        // cases) was captured in the one pass, not refused.
        assert_eq!(captured, 16);
    }
}
