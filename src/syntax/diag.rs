//! Diagnostics: hcl's `Diagnostic` (severity, summary, detail, subject range) with its
//! plain `Error()` text, which the Go implementation puts into results and conditions.

use crate::syntax::span::{SourceMap, Span};
use std::borrow::Cow;
use std::fmt::Write as _;

/// A diagnostic's text, and a result's or condition's: most summaries and many details
/// are fixed phrases, which cost no allocation (a failing attribute read inside `try`
/// makes one per evaluation; every response reports a few fixed results).
pub type Text = Cow<'static, str>;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a program, with the range it is about (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: Text,
    pub detail: Text,
    pub subject: Option<Span>,
    /// hcl's `Context` range: the larger construct the subject sits in (e.g. a whole call).
    pub context: Option<Span>,
    /// hcl's `Expression`: the range of the expression being evaluated when the problem was
    /// found; function-hcl prints its source text before the message of a deferred block.
    pub expression: Option<Span>,
}

impl Diagnostic {
    pub fn error(summary: impl Into<Text>, detail: impl Into<Text>, subject: Span) -> Self {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            subject: Some(subject),
            context: None,
            expression: None,
        }
    }

    /// function-hcl's `ToErrorDiag`: an error whose subject and context are one range.
    pub fn error_at(summary: impl Into<Text>, detail: impl Into<Text>, range: Span) -> Self {
        Diagnostic::error(summary, detail, range).with_context(range)
    }

    pub fn error_no_range(summary: impl Into<Text>, detail: impl Into<Text>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            subject: None,
            context: None,
            expression: None,
        }
    }

    pub fn warning(summary: impl Into<Text>, detail: impl Into<Text>, subject: Span) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(summary, detail, subject)
        }
    }

    /// Set hcl's `Context` range.
    pub fn with_context(mut self, context: Span) -> Self {
        self.context = Some(context);
        self
    }

    /// Set hcl's `Expression` range.
    pub fn with_expression(mut self, expression: Span) -> Self {
        self.expression = Some(expression);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// hcl's `Diagnostic.Error()`: `main.hcl:9,50-55: Summary; Detail`, `<nil>: ...` without a range.
    pub fn plain(&self, sm: &SourceMap) -> String {
        let mut s = String::new();
        match self.subject {
            Some(sp) => {
                let _ = write!(s, "{}", sm.range(sp));
            }
            None => s.push_str("<nil>"),
        }
        let _ = write!(s, ": {}; {}", self.summary, self.detail);
        s
    }

    /// The range alone plus the summary (`main.hcl:16,32-41: Unsupported attribute`), as
    /// function-hcl lists warnings in its HclDiagnostics condition.
    pub fn short(&self, sm: &SourceMap) -> String {
        match self.subject {
            Some(sp) => format!("{}: {}", sm.range(sp), self.summary),
            None => format!("<nil>: {}", self.summary),
        }
    }
}

/// hcl's `Diagnostics.Error()`: the first diagnostic, then `, and N other diagnostic(s)`.
pub fn plain_all(diags: &[Diagnostic], sm: &SourceMap) -> String {
    match diags.len() {
        0 => "no diagnostics".to_string(),
        1 => diags[0].plain(sm),
        n => format!("{}, and {} other diagnostic(s)", diags[0].plain(sm), n - 1),
    }
}

/// True if any diagnostic is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

/// Renders diagnostics for a terminal, without colour: the summary, the source lines
/// under the subject range (via codespan-reporting), then hcl's detail text. A
/// diagnostic without a range, or whose range is not in `sm`, falls back to its
/// [`Diagnostic::plain`] text.
pub fn render_rich(diags: &[Diagnostic], sm: &SourceMap) -> String {
    use codespan_reporting::diagnostic::{Diagnostic as CsDiag, Label, Severity as CsSev};
    use codespan_reporting::files::SimpleFiles;
    use codespan_reporting::term::{Config, emit_into_string};

    let mut files = SimpleFiles::new();
    for f in &sm.files {
        files.add(&*f.name, &*f.text);
    }
    let config = Config::default();
    let mut out = String::new();
    for d in diags {
        let sev = match d.severity {
            Severity::Error => CsSev::Error,
            Severity::Warning => CsSev::Warning,
        };
        let mut cs = CsDiag::new(sev).with_message(&d.summary);
        let in_range = d.subject.filter(|sp| {
            sm.get(sp.file)
                .is_some_and(|f| f.text.get(sp.bytes()).is_some())
        });
        match in_range {
            Some(sp) => {
                cs = cs.with_label(
                    Label::primary(sp.file.0 as usize, sp.bytes())
                        .with_message(sm.range(sp).to_string()),
                );
            }
            None => {
                let _ = writeln!(out, "{}", d.plain(sm));
                continue;
            }
        }
        if !d.detail.is_empty() {
            cs = cs.with_notes(vec![d.detail.to_string()]);
        }
        match emit_into_string(&config, &files, &cs) {
            Ok(s) => out.push_str(&s),
            Err(_) => {
                let _ = writeln!(out, "{}", d.plain(sm));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_forms() {
        let mut sm = SourceMap::new();
        let f = sm.add("main.hcl", "");
        let sp = Span::at(f, (0, 9, 50), (5, 9, 55));
        let d = Diagnostic::error(
            "Unsupported attribute",
            "This object does not have an attribute named \"cidr\".",
            sp,
        );
        assert_eq!(
            d.plain(&sm),
            "main.hcl:9,50-55: Unsupported attribute; This object does not have an attribute named \"cidr\"."
        );
        let n = Diagnostic::error_no_range("A", "b");
        assert_eq!(n.plain(&sm), "<nil>: A; b");
        assert_eq!(
            plain_all(&[d.clone(), n.clone(), n], &sm),
            format!("{}, and 2 other diagnostic(s)", d.plain(&sm))
        );
    }

    #[test]
    fn rich_rendering_shows_source_and_detail() {
        let mut sm = SourceMap::new();
        let f = sm.add("main.hcl", "a = 1\nb = @\n");
        let sp = Span::at(f, (10, 2, 5), (11, 2, 6));
        let d = Diagnostic::error(
            "Invalid character",
            "This character is not used within the language.",
            sp,
        );
        let s = render_rich(&[d, Diagnostic::error_no_range("Plain", "no range")], &sm);
        assert!(s.contains("error: Invalid character"), "{s}");
        assert!(s.contains("main.hcl:2:5"), "{s}");
        assert!(s.contains("b = @"), "{s}");
        assert!(s.contains("main.hcl:2,5-6"), "{s}");
        assert!(
            s.contains("This character is not used within the language."),
            "{s}"
        );
        assert!(s.contains("<nil>: Plain; no range"), "{s}");
    }
}
