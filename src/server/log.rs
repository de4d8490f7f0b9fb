//! The log line format of `fn-hcl serve`: one JSON object a line with the keys of zap's
//! production encoder, which functions built on the Go SDK (and Crossplane itself) write:
//! `level` (`debug`, `info`, `warn`, `error`), `ts` (seconds since the Unix epoch, with a
//! fraction), `caller` (`dir/file.rs:line`), `msg`, then the event's own fields, flat. Log
//! pipelines that parse Crossplane's pods parse fn-hcl's unchanged.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The zap-style JSON event format (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct ZapJson;

/// zap's level names (zap has no trace level: trace events log as `debug`).
fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        _ => "debug",
    }
}

/// zap's short caller: the file's directory and name, then the line.
fn short_caller(file: &str, line: u32) -> String {
    let mut parts = file.rsplit(['/', '\\']);
    let name = parts.next().unwrap_or(file);
    match parts.next() {
        Some(dir) if !dir.is_empty() => format!("{dir}/{name}:{line}"),
        _ => format!("{name}:{line}"),
    }
}

#[derive(Default)]
struct Fields {
    msg: Option<String>,
    rest: Vec<(&'static str, Value)>,
}

impl Fields {
    fn put(&mut self, field: &Field, v: Value) {
        if field.name() == "message" {
            self.msg = Some(match v {
                Value::String(s) => s,
                other => other.to_string(),
            });
        } else {
            self.rest.push((field.name(), v));
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, Value::from(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::from(format!("{value:?}")));
    }
}

/// One log line (without the newline).
fn line(level: &Level, ts: f64, caller: Option<String>, fields: Fields) -> String {
    let mut out = String::with_capacity(256);
    let q = |s: &str| Value::from(s).to_string();
    let _ = write!(
        out,
        "{{\"level\":{},\"ts\":{}",
        q(level_name(level)),
        Value::from(ts)
    );
    if let Some(c) = caller {
        let _ = write!(out, ",\"caller\":{}", q(&c));
    }
    let _ = write!(out, ",\"msg\":{}", q(fields.msg.as_deref().unwrap_or("")));
    for (k, v) in fields.rest {
        if matches!(k, "level" | "ts" | "caller" | "msg") {
            continue;
        }
        let _ = write!(out, ",{}:{v}", q(k));
    }
    out.push('}');
    out
}

impl<S, N> FormatEvent<S, N> for ZapJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let caller = meta
            .file()
            .zip(meta.line())
            .map(|(f, l)| short_caller(f, l));
        let mut fields = Fields::default();
        event.record(&mut fields);
        writeln!(writer, "{}", line(meta.level(), ts, caller, fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn events_are_zap_json_lines() {
        let buf = Buf::default();
        let sink = buf.clone();
        let sub = tracing_subscriber::fmt()
            .event_format(ZapJson)
            .with_writer(move || sink.clone())
            .with_max_level(Level::DEBUG)
            .finish();
        tracing::subscriber::with_default(sub, || {
            tracing::info!(
                tag = "t\"1",
                elapsed_ms = 1.5,
                results = 2u64,
                ok = true,
                "function ran"
            );
            tracing::warn!(msg = "shadowed", "grace period over");
            tracing::trace!("invisible at debug level");
        });
        let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("{\"level\":\"info\",\"ts\":"),
            "{}",
            lines[0]
        );
        let j: Value = serde_json::from_str(lines[0]).expect("JSON");
        assert_eq!(j["msg"], "function ran");
        assert_eq!(j["tag"], "t\"1");
        assert_eq!(j["elapsed_ms"], 1.5);
        assert_eq!(j["results"], 2);
        assert_eq!(j["ok"], true);
        assert!(j["ts"].as_f64().is_some_and(|t| t > 1.7e9), "{j}");
        let caller = j["caller"].as_str().expect("caller");
        assert!(caller.starts_with("server/log.rs:"), "{caller}");
        let w: Value = serde_json::from_str(lines[1]).expect("JSON");
        assert_eq!(w["level"], "warn");
        assert_eq!(w["msg"], "grace period over");
    }

    #[test]
    fn short_callers() {
        assert_eq!(short_caller("src/server/mod.rs", 7), "server/mod.rs:7");
        assert_eq!(short_caller("main.rs", 1), "main.rs:1");
        assert_eq!(
            short_caller("/root/.cargo/registry/src/h2-0.4.1/src/proto/streams.rs", 9),
            "proto/streams.rs:9"
        );
    }
}
